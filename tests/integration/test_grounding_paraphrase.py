"""Grounding of a model's paraphrase (issue 25), on the sample book with a scripted OpenAI-compatible model on
127.0.0.1: one case per way the old check (60% stemmed coverage of one cited chunk) failed. Each sentence
cites the documents that hold its passages; a passage the model was not shown it first asks for with
`retrieve_book_context`, as a model does.

Faithful sentences the old check dropped: framing, a merge of two chunks, stems and hyphens. A reversal it
kept. An answer whose core is invented, which it answered with a fragment; a dangling connective; the
stream, which must equal the final answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest

from bookrag.answering.agent import BookRAGAgent
from bookrag.answering.answerers.grounding_score import model as fitted
from bookrag.config.settings import Settings
from tests.support.agents import llm_agent
from tests.support.stubs import Recorded, Reply, StubServer
from tests.support.upstreams import chat_reply

PATH = "/v1/chat/completions"
URDF = "is an XML format that describes the physical structure"
TREE = "Because it is a tree, URDF cannot directly express closed kinematic chains"
CLASSIC = "| Gazebo Classic | up to Gazebo 11 | End of life in January 2025 |"
TOOLS = "Almost every ROS tool reads it"
STABILITY = "Stability matters more than novelty when you are debugging a walking robot"
STANCE = "Stance phase** — the foot is on the ground and supports the body"
Sentence = tuple[str, tuple[str, ...]]


def _words(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def model(*sentences: Sentence) -> Callable[[Recorded], Reply]:
    """A model that writes `sentences`, each citing the documents it was shown that hold its passages."""

    def reply(req: Recorded) -> Reply:
        body = req.json()
        text = " ".join(str(m.get("content") or "") for m in body["messages"])
        docs = re.findall(r'<document id="(S\d+)"[^>]*>(.*?)</document>', text, re.DOTALL)
        passages = [p for _, ps in sentences for p in ps]
        missing = [p for p in passages if not any(_words(p) in _words(d) for _, d in docs)]
        if missing and body.get("tools"):
            return chat_reply(req, None, [{"id": f"c{i}", "type": "function", "function": {
                "name": "retrieve_book_context", "arguments": json.dumps({"query": p})}}
                for i, p in enumerate(missing[:3])])
        out = []
        for claim, ps in sentences:
            labels = dict.fromkeys(next(label for label, d in docs if _words(p) in _words(d)) for p in ps)
            out.append(claim.rstrip(".") + " " + "".join(f"[{label}]" for label in labels) + ".")
        return chat_reply(req, " ".join(out))

    return reply


@pytest.fixture
def agent(book_env: Settings, stub: StubServer) -> BookRAGAgent:
    return llm_agent(book_env, llm_provider="openai", openai_api_key="llm-key-paraphrase",
                     openai_base_url=stub.url + "/v1", llm_timeout_s=5.0)


def model_threshold() -> float:
    return fitted().threshold


def plain(answer: str) -> str:
    return _words(re.sub(r"\[\d+\]", " ", answer))


@pytest.mark.parametrize("claim", [
    # Framing: who says it is not an unsupported word.
    ("The book's chapter on robot descriptions highlights, with examples, that URDF is an XML format.", (URDF,)),
    # Two passages merged into one sentence, citing both: neither alone covers it.
    ("URDF cannot directly express closed kinematic chains, and Gazebo Classic reached end of life in January 2025.",
     (TREE, CLASSIC)),
    # Word forms: "stable" for "Stability", "novel" for "novelty".
    ("For a walking robot under debugging, the stable choice beats the novel one.", (STABILITY,)),
    # Hyphenated compounds against the book's separate words.
    ("Stance-phase and swing-phase alternate for each leg.", (STANCE,)),
], ids=["framing", "merged-chunks", "stems", "hyphens"])
def test_a_faithful_paraphrase_is_kept_with_its_support(agent: BookRAGAgent, stub: StubServer,
                                                        claim: Sentence) -> None:
    stub.on(PATH, model(claim))

    response = agent.run("Tell me about robot descriptions and walking.")

    assert not response.is_refusal, response.refusal_reason
    assert _words(claim[0]) in plain(response.answer)
    quotes = [q for s in response.sources for q in s.quotes]
    assert quotes and all(q.support is not None and model_threshold() <= q.support <= 1.0 for q in quotes)


def test_a_sentence_that_reverses_the_book_is_dropped(agent: BookRAGAgent, stub: StubServer) -> None:
    # "little tooling support" against "Almost every ROS tool reads it": most of its words are the book's.
    stub.on(PATH, model(("URDF is an XML format describing a robot's physical structure.", (URDF,)),
                        ("URDF has little tooling support, so few ROS tools can read it.", (TOOLS,))))

    response = agent.run("What is URDF?")

    assert not response.is_refusal
    assert "XML format" in response.answer and "little tooling" not in response.answer


def test_an_answer_whose_core_is_invented_is_the_books_own_answer(agent: BookRAGAgent, stub: StubServer) -> None:
    stub.on(PATH, model(("URDF files are compiled into WebAssembly before RViz can load them.", (URDF,)),
                        ("Every URDF must be signed by the Open Robotics foundation.", (URDF,)),
                        ("URDF is an XML format describing a robot's physical structure.", (URDF,))))

    response = agent.run("What is URDF?")

    # Not a refusal, and not a fragment of the model's answer: the extractive answer, quoted from the book.
    assert not response.is_refusal and response.answer_mode == "quoted"
    assert "WebAssembly" not in response.answer and "XML" in response.answer


def test_a_dropped_sentence_leaves_no_dangling_connective(agent: BookRAGAgent, stub: StubServer) -> None:
    stub.on(PATH, model(("URDF is an XML format describing a robot's physical structure.", (URDF,)),
                        ("URDF files are compiled into WebAssembly before RViz can load them.", (URDF,)),
                        ("However, because it is a tree, URDF cannot directly express closed kinematic chains.",
                         (TREE,))))

    response = agent.run("What is URDF?")

    assert not response.is_refusal and "WebAssembly" not in response.answer
    assert "However" not in response.answer and "Because it is a tree, URDF cannot" in response.answer


def test_the_stream_sends_exactly_the_grounded_answer(agent: BookRAGAgent, stub: StubServer) -> None:
    stub.on(PATH, model(("URDF is an XML format describing a robot's physical structure.", (URDF,)),
                        ("URDF has little tooling support, so few ROS tools can read it.", (TOOLS,)),
                        ("This means that, being a tree, URDF cannot directly express closed kinematic chains.",
                         (TREE,)),
                        ("Every URDF must be signed by the Open Robotics foundation.", (URDF,))))

    events = list(agent.events("What is URDF?"))
    streamed = "".join(e.text for e in events if e.kind == "delta")
    final = events[-1].response

    assert not final.is_refusal and streamed == final.answer
    assert "little tooling" not in final.answer and "signed" not in final.answer
    assert "This means" not in final.answer and "Being a tree, URDF cannot" in final.answer
    assert stub.calls(PATH)[-1].json().get("stream") is True


def test_the_stream_of_an_answer_that_falls_back_sends_only_the_books_answer(agent: BookRAGAgent,
                                                                            stub: StubServer) -> None:
    # GIVEN a model whose first two claims are invented, then one faithful claim
    stub.on(PATH, model(("URDF files are compiled into WebAssembly before RViz can load them.", (URDF,)),
                        ("Every URDF must be signed by the Open Robotics foundation.", (URDF,)),
                        ("URDF is an XML format describing a robot's physical structure.", (URDF,))))

    # WHEN the answer streams
    events = list(agent.events("What is URDF?"))
    streamed = "".join(e.text for e in events if e.kind == "delta")
    final = events[-1].response

    # THEN nothing of the model's text was sent before the fallback: what was sent is the quoted answer
    assert not final.is_refusal and final.answer_mode == "quoted"
    assert streamed == final.answer and "WebAssembly" not in streamed
    assert [q for s in final.sources for q in s.quotes], "the book's sentences, cited with their spans"
