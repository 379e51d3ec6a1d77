"""A realistic synthetic question log, for the report's benchmark and its screenshot.

    python benchmarks/question_log_synth.py OUT_DIR --questions eval/X.jsonl [...] [--records 10000]
        [--days 30] [--variety 0.3] [--seed 7] [--asked FILE]

QDRANT_PATH must name a store holding the book (`bookrag ingest DIR`); the local embedder and the extractive
answerer are used. Every base question (the eval sets' questions, plus `OFF_BOOK`: topics a robotics
course's readers ask that the book does not cover, each in a few phrasings, so gaps appear) is asked once
through the real agent, which gives its outcome, cited sections, best chunk's similarity and latency. The log
then draws `--records` records from them: popular questions more often (Zipf), on the answer, stream,
retrieve and MCP routes, spread over `--days` with a weekly rhythm, latency jittered around the measured
one. With probability `--variety` a record's wording varies (a greeting, a lower-case retype, "in the
book", ...): what makes a real log's questions mostly distinct after normalisation. About 8% of answers
get a vote, down more often when the answer rested on little. Written through `LocalQuestionLog`.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "shared"))

OFF_BOOK = {
    "isaac-windows": ["How do I install Isaac Sim on Windows?", "Can Isaac Sim run on Windows 11?",
                      "isaac sim windows installation steps", "Is there a Windows installer for Isaac Sim?"],
    "gpu": ["What GPU do I need for this course?", "Which graphics card do I need to run the simulations?",
            "minimum GPU requirements for the labs", "Will a laptop GPU be enough for Isaac Sim?"],
    "price": ["How much does a humanoid robot cost?", "how expensive are humanoid robots",
              "What does a Unitree G1 cost?"],
    "drones": ["How do I tune a quadcopter's PID for hover?", "How do drones stay stable in the air?",
               "quadrotor attitude control explained"],
    "grading": ["When is the final exam?", "How is the course graded?", "What is the deadline for the capstone?",
                "how many points is the capstone project worth"],
    "mac": ["Can I use ROS 2 on a Mac with Apple silicon?", "Does ROS 2 run natively on macOS?",
            "ros2 on m1 macbook"],
    "battery": ["How long does a humanoid robot's battery last?", "What batteries do humanoid robots use?",
                "battery life of humanoid robots"],
    "jobs": ["What jobs can I get after learning robotics?", "Is robotics a good career?",
             "which companies hire humanoid robotics engineers"],
    "weather": ["What's the weather in Karachi today?", "What is the capital of France?"],
}
PREFIXES = ["", "", "hi, ", "quick question: ", "please explain: ", "can you tell me ", "i don't get it: "]
SUFFIXES = ["", "", " thanks", " in the book?", " (for the lab)", " explain simply", " pls"]
ROUTES = [("answer_stream", 0.55), ("answer", 0.2), ("retrieve", 0.15), ("mcp_answer", 0.07), ("mcp_retrieve", 0.03)]
COMMENTS = ["the formula is wrong", "this did not answer my question", "too vague", "wrong section",
            "call me at 555-0100"]  # the last one as a scrubbed store would hold it: scrubbing is the writer's


def base_questions(files: list[Path]) -> list[str]:
    seen: dict[str, None] = {}
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                q = json.loads(line).get("question")
                if q:
                    seen.setdefault(str(q), None)
    for phrasings in OFF_BOOK.values():
        for q in phrasings:
            seen.setdefault(q, None)
    return list(seen)


def ask_all(questions: list[str]) -> list[dict[str, Any]]:
    """Each question once through the real agent and retriever of the configured store."""
    from bookrag.config.settings import get_settings
    from bookrag.services.container import container_for

    container = container_for(get_settings())
    agent, retriever = container.agent, container.retriever
    version = container.store.book_version()
    out = []
    for q in questions:
        t0 = time.perf_counter()
        response = agent.run(q)
        latency = (time.perf_counter() - t0) * 1000
        hits = retriever.search(q).hits
        out.append({"question": q, "refused": response.is_refusal, "reason": response.refusal_reason or None,
                    "sections": [{"url": s.source_url, "title": f"{s.chapter} > {s.section}", "score": s.score}
                                 for s in response.sources[:3]],
                    "retrieved": [{"url": h.payload.source_url, "title": " > ".join(h.payload.heading_path),
                                   "score": h.score} for h in hits[:5]],
                    "top_score": hits[0].score if hits else 0.0, "latency_ms": latency,
                    "book_version": version.label if version else ""})
    return out


def vary(question: str, rng: random.Random) -> str:
    text = rng.choice(PREFIXES) + (question[0].lower() + question[1:] if rng.random() < 0.5 else question)
    if rng.random() < 0.3:
        text = text.rstrip("?")
    return text + rng.choice(SUFFIXES)


def synthesise(asked: list[dict[str, Any]], records: int, days: int, variety: float, seed: int,
               now: float) -> tuple[list[Any], list[Any]]:
    from bookrag.domain.question_log import FeedbackRecord, LoggedSection, QueryRecord

    rng = random.Random(seed)
    order = list(range(len(asked)))
    rng.shuffle(order)
    weights = [1.0 / (rank + 1) ** 0.8 for rank in range(len(asked))]  # popularity: a gentle Zipf
    routes, route_w = zip(*ROUTES, strict=True)
    out, votes = [], []
    for _ in range(records):
        base = asked[order[rng.choices(range(len(asked)), weights)[0]]]
        route = rng.choices(routes, route_w)[0]
        day = rng.random() * days
        at = now - day * 86_400
        if datetime_weekday(at) >= 5 and rng.random() < 0.4:  # quieter weekends
            at -= 2 * 86_400
        retrieval = route.endswith("retrieve")
        error = rng.random() < 0.004
        refused = not retrieval and not error and base["refused"]
        outcome = "error" if error else "refused" if refused else "answered"
        cited = base["retrieved"] if retrieval else base["sections"]
        latency = (base["latency_ms"] * (0.15 if retrieval else 1.0)) * math.exp(rng.gauss(0, 0.35))
        record = QueryRecord(
            query_id=uuid.UUID(int=rng.getrandbits(128)).hex, at=at, route=route,
            question=vary(base["question"], rng) if rng.random() < variety else base["question"],
            book_version=base["book_version"], outcome=outcome,
            refusal_reason="UPSTREAM_TIMEOUT" if error else base["reason"] if refused else None,
            sections=() if error else tuple(LoggedSection(**s) for s in first_per_url(cited)),
            latency_ms=round(latency, 1), answerer="" if retrieval else "extractive",
            key_hash=f"k{rng.randrange(40):02d}", top_score=None if error else base["top_score"])
        out.append(record)
        if outcome == "answered" and not retrieval and rng.random() < 0.08:
            down = rng.random() < (0.55 if base["top_score"] < 0.45 else 0.15)
            votes.append(FeedbackRecord(query_id=record.query_id, rating="down" if down else "up",
                                        at=at + 30, comment=rng.choice(COMMENTS) if down and rng.random() < 0.4
                                        else None))
    out.sort(key=lambda r: r.at)
    return out, votes


def first_per_url(sections: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A section once, at its best place (an answer may cite two chunks of one section)."""
    seen: dict[str, dict[str, Any]] = {}
    for s in sections:
        seen.setdefault(s["url"], s)
    return list(seen.values())


def datetime_weekday(at: float) -> int:
    return time.gmtime(at).tm_wday


def write_log(folder: Path, records: list[Any], votes: list[Any]) -> None:
    from bookrag.adapters.question_log.local import LocalQuestionLog

    log = LocalQuestionLog(folder)
    log.write(records)
    for vote in votes:
        log.add_feedback(vote)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--questions", type=Path, nargs="+", required=True)
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--variety", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--asked", type=Path, help="Reuse (or write) the agent's answers here")
    args = parser.parse_args()
    if args.asked and args.asked.exists():
        asked = json.loads(args.asked.read_text(encoding="utf-8"))
    else:
        asked = ask_all(base_questions(args.questions))
        if args.asked:
            args.asked.write_text(json.dumps(asked, separators=(",", ":")) + "\n", encoding="utf-8")
    records, votes = synthesise(asked, args.records, args.days, args.variety, args.seed, time.time())
    write_log(args.out, records, votes)
    print(f"{len(records)} records, {len(votes)} votes from {len(asked)} questions -> {args.out}")


if __name__ == "__main__":
    main()
