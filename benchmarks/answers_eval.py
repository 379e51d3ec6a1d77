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
SETS = {"sample-book": "answers-sample-book.jsonl", "textbook-2": "answers-textbook-2.jsonl",
        # Issue 37's blind sets, written by someone who never read the answering code: textbook-2 (the book we
        # tune on) and redux (never tuned on), reported side by side.
        "textbook-2-blind": "answers-textbook-2-blind.jsonl", "redux": "answers-redux.jsonl",
        # A second book we tune on, in redux's field (Starlette's docs), written the same way.
        "starlette": "answers-starlette.jsonl"}
BLIND = ("textbook-2-blind", "starlette", "redux")
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
        baselines = folder / f"{name}-baselines.json"
        if baselines.exists():
            entry["baselines"] = json.loads(baselines.read_text(encoding="utf-8"))
        if "selections" in run:
            entry["selections"] = {k: v for k, v in run["selections"].items() if k != "per_question"}
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


def blind_rows(entry: dict[str, Any]) -> dict[str, float | None]:
    """Issue 37's figures of one blind set: the answers, then retrieval against the plain baselines."""
    rows = [q for q in entry["questions"] if q["kind"] != "unanswerable"]
    off = [q for q in entry["questions"] if q["kind"] == "unanswerable"]
    overall = entry["shapes"]["overall"]
    out: dict[str, float | None] = {
        "answered with the expected fact": sum(q["keyword_recall"] > 0 for q in rows) / len(rows) if rows else None,
        "keyword recall": overall.get("keyword_recall"), "lead from the gold section": overall.get("lead_from_gold"),
        "false refusals": overall.get("false_refusals"),
        "off-book refused": sum(q["refused"] for q in off) / len(off) if off else None,
        "label kept (list, table)": overall.get("label_kept"), "answers with an off-topic sentence":
            overall.get("with_off_topic")}
    base = entry.get("baselines")
    if base:
        out["no-logic answer (top 3 chunks' first 600 chars): with the fact"] = base["no_logic_answer"]["with_keyword"]
        reach = base.get("reach")
        if reach:  # what any answer quoting our chunks could hold (benchmarks/baselines.py)
            for k in (5, 8, 24):
                at = reach["k"].index(k)
                out[f"reach: the fact in our top {k} chunks"] = reach["with_fact"][at]
                out[f"reach: keyword recall of our top {k} chunks"] = reach["keyword_recall"][at]
        for name in ("ours", "rrf", "bm25", "dense"):
            for metric in ("mrr@10", "hit@5", "refusal_auc"):
                out[f"retrieval {name}: {metric}"] = base["retrieval"][name][metric]
    return out


def blind_table(data: dict[str, Any], before: dict[str, Any]) -> list[str]:
    present = [n for n in BLIND if n in data]
    if not present:
        return []
    rows = {n: blind_rows(data[n]) for n in present}
    old = {n: blind_rows(before[n]) for n in present if n in before and "questions" in before[n]}
    gap = "textbook-2-blind" in present and "redux" in present
    lines = ["## The books, blind sets (issue 37)", "",
             "textbook-2-blind and starlette are books we tune on, redux the one we never tune on; the gap is redux "
             "minus textbook-2. \"Answered with the expected fact\": an answerable question whose answer holds at "
             "least one of its keywords.",
             "", "| | " + " | ".join(present) + (" | gap |" if gap else " |"),
             "| --- |" + " ---: |" * (len(present) + gap)]
    for metric in rows[present[0]]:
        cells = [cell(rows[n].get(metric), old.get(n, {}).get(metric)) for n in present]
        if gap:
            values = [rows["textbook-2-blind"].get(metric), rows["redux"].get(metric)]
            cells.append("-" if None in values else f"{values[1] - values[0]:+.2f}")  # type: ignore[operator]
        lines.append(f"| {metric} | " + " | ".join(cells) + " |")
    return [*lines, ""]


def reach_curve(data: dict[str, Any], out: Path) -> None:
    """benchmarks/answer-reach.png: per blind book, the share of answerable questions whose expected fact is in our
    top k chunks against k, and where our answers stand (the answerer reads the top 5)."""
    books = [n for n in BLIND if n in data and data[n].get("baselines", {}).get("reach")]
    if not books:
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for name in books:
        reach, fig_rows = data[name]["baselines"]["reach"], blind_rows(data[name])
        for ax, key, ours in ((axes[0], "with_fact", "answered with the expected fact"),
                              (axes[1], "keyword_recall", "keyword recall")):
            line, = ax.plot(reach["k"], reach[key], marker="o", label=name)
            ax.scatter([5], [fig_rows[ours]], marker="*", s=160, color=line.get_color(), zorder=3)
    # Each panel's title and the target for it (redux: the fact 0.90, keyword recall 0.80).
    panels = (("the expected fact in our top k chunks", 0.9), ("keyword recall of our top k chunks", 0.8))
    for ax, (title, target) in zip(axes, panels, strict=True):
        ax.set_title(title)
        ax.set_xlabel("k (chunks, in our retrieval's order)")
        ax.axvline(5, color="grey", lw=0.8, ls=":")
        ax.axhline(target, color="grey", lw=0.8, ls="--")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("share of answerable questions")
    axes[0].legend(loc="lower right")
    fig.suptitle("What an answer quoting our chunks can reach (lines), where our answers stand (stars, k = 5), "
                 "the issue's target (dashes)", fontsize=9)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def render(data: dict[str, Any], before: dict[str, Any]) -> str:
    lines = ["# Answer evaluation (issues 24, 37)", "",
             "Written by `make eval` (`benchmarks/answers_eval.py`): local embedder, extractive answerer, each book "
             "ingested into its own embedded store. Metrics: eval/README.md (\"Answer sets\"). Shares are of "
             "answered answerable questions, except n, keyword recall (a refusal scores 0), false refusals "
             "(answerable refused) and false answers (unanswerable answered). Figures read \"before → now\" where "
             "they differ from `answers-eval-before.json`: for sample-book and textbook-2 the answerer before "
             "issue 24, for the blind sets (textbook-2-blind, redux) the answerer before issue 37.", "",
             *blind_table(data, before)]
    for name, entry in data.items():
        old = before.get(name, {})
        lines += [f"## {name} (`eval/{entry['question_set']}`)", ""]
        lines += [*table(entry["shapes"], old.get("shapes", {}), list(COLUMNS), "shape"), ""]
        conv = entry.get("conversations_c")
        if conv:
            old_conv = old.get("conversations_c", {})
            hit, old_hit = conv["hit@5"], old_conv.get("hit@5", {})
            lines += [f"### Conversations ({conv['conversations']} "
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
    reach_curve(data, HERE / "answer-reach.png")
    sys.stdout.write(render(data, before) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(".bookrag/answers-eval")))
