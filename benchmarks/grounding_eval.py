"""The grounding eval (issue 25): model answers scripted from a grounding set go through the real Gemini path,
and each sentence is checked: was it kept or dropped?

`run`: one book. A stub Gemini endpoint (OpenAI-compatible, `tests/support/stubs.py`) on 127.0.0.1 plays the
model: for each question of the set it writes the set's sentences, each citing the documents (labels it was
shown) that hold its passages; a passage it was not shown, it first asks for with `retrieve_book_context` (at
most 3 calls a step), as a model does. The agent is the container's (`LLM_PROVIDER=gemini`, the store in
QDRANT_PATH, the local embedder): retrieval, the tool loop, grounding, the citation check, as `POST /api/answer`
runs them. A sentence counts as kept when its words (minus a leading connective) are in the final answer.
Added latency: the agent's check of the recorded draft (`_check`: grounding and citations), re-run with a
fresh ledger on each answer (nothing read or embedded yet), p50 and p90 per answer, one BLAS thread as in Lambda.

`report`: the runs in a folder as one table per book and overall -> <out>.json and <out>.md.

Usage:
  QDRANT_PATH=... python benchmarks/grounding_eval.py run eval/grounding-textbook-2.jsonl out.json
  python benchmarks/grounding_eval.py report .bookrag/grounding-eval benchmarks/grounding-after "title"
  python benchmarks/grounding_eval.py features eval/grounding-features.csv run1.json run2.json ...
"""

from __future__ import annotations

import json
import logging
import os
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

# As the deployed function runs (template.yaml): one BLAS thread. On a shared, busy machine more threads
# spin against each other (a MiniLM pass measured 1 s instead of 20 ms at load 13 on 2 cores).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # tests.support.stubs: the same stub server the tests use

from tests.support.stubs import Recorded, Reply, StubServer  # noqa: E402

from bookrag.answering.answerers.base import Draft  # noqa: E402
from bookrag.answering.answerers.grounding import Grounder, GroundingCache, judge  # noqa: E402

try:  # the before run (issue 34) measures the code whose verdict had no fitted features
    from bookrag.answering.answerers.grounding_score import FEATURES
except ImportError:  # pragma: no cover - only before issue 34
    FEATURES = ()
from bookrag.answering.citations import Ledger  # noqa: E402
from bookrag.config.settings import load_settings  # noqa: E402
from bookrag.devtools.book_sections import tokens  # noqa: E402
from bookrag.services.container import container_for  # noqa: E402

KINDS = ("faithful", "unsupported", "number", "negation", "elsewhere")
INVENTED = KINDS[1:]
PATH = "/v1beta/openai/chat/completions"
_DOC = re.compile(r'<document id="(S\d+)"[^>]*>\n(.*?)\n</document>', re.DOTALL)


def holds(doc: str, passage: str) -> bool:
    return " ".join(tokens(passage)) in " ".join(tokens(doc))


class ScriptedModel:
    """The model: the set's sentences for the question it is asked, citing the documents it was shown."""

    def __init__(self, cases: dict[str, dict[str, Any]]) -> None:
        self.cases = cases
        self.unseen: dict[str, list[str]] = {}  # question -> passages never shown to it

    def __call__(self, req: Recorded) -> Reply:
        body = req.json()
        messages = body["messages"]
        question = str(messages[1]["content"]).split("\n", 1)[0].removeprefix("Question: ").strip()
        case = self.cases[question]
        docs = [d for m in messages for d in _DOC.findall(str(m.get("content") or ""))]
        passages = [p for s in case["sentences"] for p in s["passages"]]
        missing = list(dict.fromkeys(p for p in passages if not any(holds(text, p) for _, text in docs)))
        if missing and body.get("tools"):
            calls = [{"id": f"c{i}", "type": "function", "function": {
                "name": "retrieve_book_context", "arguments": json.dumps({"query": p[:300]})}}
                     for i, p in enumerate(missing[:3])]
            return Reply(200, _completion(None, calls))
        self.unseen[question] = missing
        out = []
        for sentence in case["sentences"]:
            labels = [next((label for label, text in docs if holds(text, p)), "") for p in sentence["passages"]]
            labels = list(dict.fromkeys(label for label in labels if label)) or [docs[0][0]]
            text = sentence["text"].rstrip(".")
            out.append(f"{text} " + "".join(f"[{label}]" for label in labels) + ".")
        return Reply(200, _completion(" ".join(out)))


def _completion(content: str | None, tool_calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {"id": "c", "object": "chat.completion", "model": "stub",
            "choices": [{"index": 0, "finish_reason": "tool_calls" if tool_calls else "stop", "message": message}]}


class Recorder:
    """The agent's answerer, its drafts and every hit it saw recorded (for the latency re-run)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.last: tuple[Draft, dict[str, Any]] | None = None

    def answer(self, question: str, hits: list[Any], retrieve: Any, deadline: Any) -> Draft:
        seen = {h.chunk_id: h for h in hits}

        def recording(text: str) -> list[Any]:
            more = retrieve(text)
            seen.update((h.chunk_id, h) for h in more)
            return more

        draft = self.inner.answer(question, hits, recording, deadline)
        self.last = (draft, seen)
        return draft


def _judged(agent: Any, draft: Draft, seen: dict[str, Any], sentences: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each set sentence's verdict as the agent judges it (the core rule aside), with every feature computed
    (the cosine too, which the agent asks for only when it could change the verdict): the fit's table and
    the threshold's curve are read from these."""
    out: list[dict[str, Any]] = [{} for _ in sentences]
    base = agent._grounder
    exact = Grounder(base.embed, base.neighbours, exact=True) if FEATURES else base
    for v in judge(Draft(draft.text, citations=dict(draft.citations)), seen, GroundingCache(), exact):
        for i, s in enumerate(sentences):
            if kept(s["text"], v.sentence):
                features = getattr(v, "features", None)
                out[i].update(score=v.score, lexical=v.lexical, semantic=v.semantic, reason=v.reason,
                              check_kept=v.kept, judged=v.judged,
                              features=dict(zip(FEATURES, features.row(), strict=True)) if features else None)
    return out


def kept(sentence: str, answer: str) -> bool:
    said = " ".join(tokens(re.sub(r"\[\d+\]", " ", answer)))
    mine = tokens(sentence)
    # A leading connective may have been dropped with the sentence before it.
    return any(" ".join(mine[k:]) in said for k in range(0, min(3, len(mine) - 3)))


def run(set_path: str, out_path: str) -> int:
    logging.getLogger("bookrag").setLevel(logging.WARNING)  # one "sentences dropped" line per answer otherwise
    cases = [json.loads(line) for line in Path(set_path).read_text(encoding="utf-8").splitlines() if line.strip()]
    model = ScriptedModel({c["question"]: c for c in cases})
    with StubServer() as stub:
        stub.on(PATH, model)
        settings = load_settings(embedding_provider="local", llm_provider="gemini", gemini_api_key="grounding-eval",
                                 gemini_base_url=stub.url + "/v1beta/openai", llm_timeout_s=10.0)
        agent = container_for(settings).agent
        recorder = Recorder(agent.answerer)
        agent.answerer = recorder
        results, timings = [], []
        for case in cases:
            response = agent.run(case["question"])
            assert recorder.last is not None
            draft, seen = recorder.last
            for _ in range(3):  # the check alone, on a fresh ledger (nothing read yet), as a request runs it
                ledger = Ledger()
                ledger.record(list(seen.values()))
                start = time.perf_counter()
                agent._check(Draft(draft.text, citations=dict(draft.citations)), ledger)
                timings.append((time.perf_counter() - start) * 1000)
            unseen = model.unseen.get(case["question"], [])
            curve = _judged(agent, draft, seen, case["sentences"])
            results.append({
                "id": case["id"], "question": case["question"], "answer": response.answer,
                "refused": response.is_refusal, "refusal_reason": response.refusal_reason,
                "mode": getattr(response, "answer_mode", "generated"),
                "sentences": [{"kind": s["kind"], "text": s["text"], "habit": s.get("habit") or "-",
                               # The model's sentence reached the reader: a quoted answer holds none of them.
                               "kept": not response.is_refusal and getattr(response, "answer_mode", "") != "quoted"
                               and kept(s["text"], response.answer),
                               "shown": not any(p in unseen for p in s["passages"]), **curve[i]}
                              for i, s in enumerate(case["sentences"])],
                "quotes": [{"chunk_id": src.chunk_id, "text": q.text,
                            "support": getattr(q, "support", None)} for src in response.sources for q in src.quotes],
            })
    per_answer = [statistics.median(timings[i:i + 3]) for i in range(0, len(timings), 3)]
    data = {"set": set_path, "summary": summarise(results), "check_ms": timing(per_answer), "answers": results}
    Path(out_path).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps({"summary": data["summary"], "check_ms": data["check_ms"]}, indent=2))
    return 0


def timing(per_answer: list[float]) -> dict[str, Any]:
    ordered = sorted(per_answer)
    return {"p50": round(statistics.median(ordered), 2), "p90": round(ordered[int(0.9 * (len(ordered) - 1))], 2),
            "per_answer": [round(t, 2) for t in per_answer]}


HABITS = ("count-words", "overview", "list-summary", "merged", "reworded-definition", "paraphrase", "-")
# Report columns; others follow.
ORDER = ("sample-book", "textbook-2", "textbook-2-blind", "textbook-2-negations", "starlette", "redux")


def summarise(results: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"questions": len(results)}

    def rate(ok: int, n: int) -> dict[str, Any]:
        return {"n": n, "ok": ok, "rate": round(ok / n, 3) if n else None}

    shown = [s for r in results for s in r["sentences"] if s["shown"]]
    for kind in KINDS:
        rows = [s for s in shown if s["kind"] == kind]
        out[kind] = rate(sum(s["kept"] for s in rows) if kind == "faithful" else sum(not s["kept"] for s in rows),
                         len(rows))
    invented = [s for s in shown if s["kind"] in INVENTED]
    out["invented"] = rate(sum(not s["kept"] for s in invented), len(invented))
    for habit in HABITS:  # faithful sentences by the habit they were written with (the blind sets say)
        rows = [s for s in shown if s["kind"] == "faithful" and s.get("habit", "-") == habit]
        if rows:
            out[f"habit:{habit}"] = rate(sum(s["kept"] for s in rows), len(rows))
    out["not_shown"] = sum(not s["shown"] for r in results for s in r["sentences"])
    out["refused"] = sum(r["refused"] for r in results)
    out["quoted"] = sum(r.get("mode") == "quoted" for r in results)
    # Refused although every passage was shown and it held faithful sentences: a right answer lost.
    out["refused_faithful_shown"] = sum(r["refused"] and all(s["shown"] for s in r["sentences"])
                                        and any(s["kind"] == "faithful" for s in r["sentences"]) for r in results)
    out["refused_reasons"] = dict(sorted({r["refusal_reason"]: sum(x["refusal_reason"] == r["refusal_reason"]
                                                                    for x in results if x["refused"])
                                          for r in results if r["refused"]}.items()))
    return out


def report(folder: str, out: str, title: str) -> int:
    found = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(Path(folder).glob("*.json"))}
    runs = {name: found[name] for name in (*[n for n in ORDER if n in found], *[n for n in found if n not in ORDER])}
    every = [a for r in runs.values() for a in r["answers"]]
    summaries = {name: {**summarise(r["answers"]), "check_ms": r["check_ms"]} for name, r in runs.items()}
    summaries["overall"] = {**summarise(every), "check_ms": timing(
        [t for r in runs.values() for t in r["check_ms"].get("per_answer", [])] or [0.0])}
    Path(out + ".json").write_text(json.dumps({"title": title, "summaries": summaries, "answers": {
        name: r["answers"] for name, r in runs.items()}}, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    lines = [f"# {title}", "", "Made by `benchmarks/grounding_eval.py` (see its docstring): the real Gemini path "
             "through a stub model on 127.0.0.1 that writes the set's sentences.", "", *table(summaries)]
    refused = [a["id"] for a in every if a["refused"] and all(s["shown"] for s in a["sentences"])
               and any(s["kind"] == "faithful" for s in a["sentences"])]
    quoted = [a["id"] for a in every if a.get("mode") == "quoted"]
    lines += ["", "The threshold's curve: benchmarks/grounding-curve.png (figures in grounding-curve.json).", "",
              f"Answers with faithful sentences refused: {', '.join(refused) or 'none'}; answered with the book's "
              f"own sentences instead of the model's (quoted): {', '.join(quoted) or 'none'}.", ""]
    Path(out + ".md").write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))
    return 0


def table(summaries: dict[str, dict[str, Any]]) -> list[str]:
    """The summaries as one Markdown table, a column per run."""
    lines = ["| | " + " | ".join(summaries) + " |", "| --- |" + " ---: |" * len(summaries)]
    labels = {"faithful": "faithful sentences kept",
              **{f"habit:{h}": f"- written as {h if h != '-' else 'plain statements'}" for h in HABITS},
              "invented": "invented sentences dropped", "unsupported": "- unsupported facts",
              "number": "- changed numbers", "negation": "- negations / antonyms",
              "elsewhere": "- true elsewhere, not in the cited chunk"}
    for key, label in labels.items():
        if not any(key in s for s in summaries.values()):
            continue
        cells = [f"{s[key]['ok']} / {s[key]['n']} ({100 * (s[key]['rate'] or 0):.0f}%)" if s.get(key) else ""
                 for s in summaries.values()]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    for key, label in (("refused", "answers refused"), ("refused_faithful_shown", "- of them with faithful content "
                       "retrieved"), ("quoted", "answers quoted from the book (fallback)"),
                       ("not_shown", "passages never shown (excluded)")):
        lines.append(f"| {label} | " + " | ".join(str(s.get(key, "")) for s in summaries.values()) + " |")
    lines.append("| check p50 / p90 per answer (ms) | " + " | ".join(
        f"{s['check_ms']['p50']} / {s['check_ms']['p90']}" if "check_ms" in s else "" for s in summaries.values())
        + " |")
    return lines


def features(out: str, runs: list[str]) -> int:
    """The fit's table (`bookrag.devtools.fit_grounding`): one row per judged set sentence the model was shown,
    its set, kind, habit, label (faithful = 1) and features, from `run` outputs."""
    lines = [",".join(("set", "id", "n", "kind", "habit", "label", *FEATURES))]
    for path in runs:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        name = Path(data["set"]).stem
        for answer in data["answers"]:
            for n, s in enumerate(answer["sentences"]):
                if s["shown"] and s.get("features"):
                    row = (name, answer["id"], str(n), s["kind"], s.get("habit") or "-",
                           str(int(s["kind"] == "faithful")), *(f"{s['features'][f]:.6f}" for f in FEATURES))
                    lines.append(",".join(row))
    Path(out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(lines) - 1} rows -> {out}")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["run"]:
        sys.exit(run(sys.argv[2], sys.argv[3]))
    if sys.argv[1:2] == ["features"]:
        sys.exit(features(sys.argv[2], sys.argv[3:]))
    sys.exit(report(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else "Grounding eval"))
