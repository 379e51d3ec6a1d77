"""The model is briefed with the book it serves (issue 38, item 4): the agent contract's wording names the
Physical AI & Humanoid Robotics textbook, and a deployment of any other book told the model it answered from
that textbook. The title comes from `bookrag ingest --title`, else the site's docusaurus.config `title`, and
is kept with the book version; the contract's own wording stays for its textbook and for an unknown title."""

from __future__ import annotations

import textwrap
from pathlib import Path

from bookrag.answering.answerers.base import SYSTEM_PROMPT, system_prompt
from bookrag.config.settings import load_settings
from bookrag.ingestion.ingestor import Ingestor
from bookrag.services.container import container_for
from tests.support.agents import llm_agent
from tests.support.stubs import StubServer
from tests.support.upstreams import model_says

KEY = "llm-canary-5b1e0c2d"
OPENAI_PATH = "/v1/chat/completions"
PAGE = """
    # Feeding the Starter

    Feed the sourdough starter once a day: discard half of it, then stir in equal weights of flour and water.
"""


def _site(root: Path, config: str | None) -> Path:
    docs = root / "site" / "docs"
    docs.mkdir(parents=True)
    (docs / "starter.md").write_text(textwrap.dedent(PAGE).lstrip(), encoding="utf-8")
    if config is not None:
        (root / "site" / "docusaurus.config.js").write_text(textwrap.dedent(config), encoding="utf-8")
    return docs


def test_the_model_is_told_the_title_of_the_book_it_serves(tmp_path: Path, stub: StubServer) -> None:
    docs = _site(tmp_path, """
        // @ts-check
        module.exports = {
          title: 'Baking Bread at Home',
          url: 'https://bread.example', baseUrl: '/',
        };
    """)
    store = load_settings(qdrant_path=tmp_path / "qdrant", embedding_provider="local")
    report = Ingestor(store, container_for(store).embedder, container_for(store).store).run(docs)
    assert report.book_version is not None and report.book_version.title == "Baking Bread at Home"
    stub.on(OPENAI_PATH, model_says("Feed it once a day [S1]."))
    agent = llm_agent(store, llm_provider="openai", openai_api_key=KEY, openai_base_url=stub.url + "/v1")

    agent.run("How often do I feed the starter?")

    body = stub.calls(OPENAI_PATH)[0].json()
    briefing = body["messages"][0]["content"]
    tool = body["tools"][0]["function"]["description"]
    assert 'ONLY using content from the book "Baking Bread at Home".' in briefing
    assert "Physical AI" not in briefing and "Physical AI" not in tool
    assert 'from the book "Baking Bread at Home" for answering' in tool


def test_a_title_given_at_ingest_wins_and_a_new_title_is_a_new_version(tmp_path: Path) -> None:
    docs = _site(tmp_path, "module.exports = { title: 'Bread' };\n")
    store = load_settings(qdrant_path=tmp_path / "qdrant", embedding_provider="local")
    first = Ingestor(store, container_for(store).embedder, container_for(store).store).run(docs).book_version
    named = Ingestor(store, container_for(store).embedder, container_for(store).store,
                     title="Sourdough  for Beginners").run(docs).book_version

    assert first is not None and named is not None
    assert (first.title, named.title) == ("Bread", "Sourdough for Beginners")
    assert named.content_hash != first.content_hash
    assert container_for(store).store.book_version() == named


def test_the_contracts_own_wording_stays_for_its_textbook_and_an_unknown_title() -> None:
    assert system_prompt("") == SYSTEM_PROMPT
    assert system_prompt("Physical AI & Humanoid Robotics") == SYSTEM_PROMPT
    assert system_prompt("Physical AI & Humanoid Robotics Textbook") == SYSTEM_PROMPT
    assert "the Physical AI & Humanoid Robotics textbook" in SYSTEM_PROMPT
