"""`make eval`'s report: benchmarks/answers-eval.json and answers-eval.md from the runs in a folder.

Usage: python benchmarks/answers_eval.py .bookrag/answers-eval
Reads `<folder>/sample-book.json` and, when textbook-2 ran, `<folder>/textbook-2.json` (`bookrag eval --answers
--json`). When benchmarks/answers-eval-before.json exists (the "before" run of issue 24, committed), each
figure of the Markdown tables reads "before → now" where they differ.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SETS = {"sample-book": "answers-sample-book.jsonl", "textbook-2": "answers-textbook-2.jsonl"}
COLUMNS = {"n": "n", "keyword_recall": "keyword recall", "false_refusals": "false refusals",
           "false_answers": "false answers", "lead_from_gold": "lead from gold", "with_off_topic": "with off-topic",
           "off_topic_sentences": "off-topic sentences", "label_kept": "label kept",
           "with_markup_in_prose": "markup in prose", "definition_lead": "definition lead"}
CONV_COLUMNS = ("n", "keyword_recall", "false_refusals", "lead_from_gold", "with_off_topic", "off_topic_sentences")


def collect(folder: Path) -> dict[str, Any]:
    """The summaries and per-question answers of each set that ran."""
    out: dict[str, Any] = {}
    for name in SETS:
        path = folder / f"{name}.json"
        if not path.exists():
            continue
        run = json.loads(path.read_text(encoding="utf-8"))
        answers = run["answers"]
        entry: dict[str, Any] = {"question_set": SETS[name], "config": run["config"],
                                 "shapes": answers["summary"]["shapes"], "questions": answers["questions"]}
        if "conversations" in run:
            conv = run["conversations"]
            entry["conversations_c"] = {k: conv[k] for k in ("conversations", "rewriter", "hit@5",
                                                             "last_turn_reader_checks", "per_last_turn")}
        out[name] = entry
    return out


def cell(now: Any, before: Any) -> str:
    def fmt(value: Any) -> str:
        return "-" if value is None else str(value) if isinstance(value, int) else f"{value:.2f}"

    return fmt(now) if before is None or fmt(before) == fmt(now) else f"{fmt(before)} → {fmt(now)}"


def table(rows: dict[str, dict[str, Any]], before: dict[str, dict[str, Any]], columns: Any, first: str) -> list[str]:
    names = [COLUMNS[c] for c in columns]
    lines = [f"| {first} | " + " | ".join(names) + " |", "| --- |" + " ---: |" * len(names)]
    for key, row in rows.items():
        old = before.get(key, {})
        lines.append(f"| {key} | " + " | ".join(cell(row.get(c), old.get(c)) for c in columns) + " |")
    return lines


def render(data: dict[str, Any], before: dict[str, Any]) -> str:
    lines = ["# Answer evaluation (issue 24)", "",
             "Written by `make eval` (`benchmarks/answers_eval.py`): local embedder, extractive answerer, each book "
             "ingested into its own embedded store. Metrics: eval/README.md (\"Answer sets\"). Shares are of "
             "answered answerable questions, except n, keyword recall (a refusal scores 0), false refusals "
             "(answerable refused) and false answers (unanswerable answered). Figures read \"before → now\" where "
             "they differ from `answers-eval-before.json`.", ""]
    for name, entry in data.items():
        old = before.get(name, {})
        lines += [f"## {name} (`eval/{entry['question_set']}`)", ""]
        lines += [*table(entry["shapes"], old.get("shapes", {}), list(COLUMNS), "shape"), ""]
        conv = entry.get("conversations_c")
        if conv:
            old_conv = old.get("conversations_c", {})
            hit, old_hit = conv["hit@5"], old_conv.get("hit@5", {})
            lines += [f"### Conversation set C (`eval/conversations-textbook-2-c.jsonl`, {conv['conversations']} "
                      f"conversations, rewriter {conv['rewriter']}): last turns", "",
                      "Follow-up hit@5: with history " + cell(hit["with_history"], old_hit.get("with_history"))
                      + ", as typed " + cell(hit["without"], old_hit.get("without"))
                      + ", written in full " + cell(hit["full"], old_hit.get("full")) + ".", ""]
            lines += [*table(conv["last_turn_reader_checks"], old_conv.get("last_turn_reader_checks", {}),
                             CONV_COLUMNS, "pattern"), ""]
    return "\n".join(lines)


def main(folder: Path) -> int:
    data = collect(folder)
    if not data:
        sys.stderr.write(f"no runs in {folder}\n")
        return 1
    before_path = HERE / "answers-eval-before.json"
    before = json.loads(before_path.read_text(encoding="utf-8")) if before_path.exists() else {}
    (HERE / "answers-eval.json").write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    (HERE / "answers-eval.md").write_text(render(data, before) + "\n", encoding="utf-8")
    sys.stdout.write(render(data, before) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(".bookrag/answers-eval")))
