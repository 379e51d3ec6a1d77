"""MDX shapes of real Docusaurus books, read the way the site renders them (issue 28).

Each test is one shape: what the page shows stays (as text a reader would recognise), what the page runs
(imports, exports, comments, a component's settings) goes, and a heading's id is the one Docusaurus gives
it (`tests/integration/test_docusaurus_build.py` checks these against a real build).
"""

from __future__ import annotations

from bookrag.devtools.mdx_artefacts import artefacts
from bookrag.ingestion.chunker import ChunkDraft, chunk_document, parse_document


def _chunks(text: str, rel_path: str = "guide.mdx", **kwargs: int) -> list[ChunkDraft]:
    return chunk_document(parse_document(text, rel_path), **kwargs)


def _body(text: str) -> str:
    return parse_document(text, "guide.mdx").body


def _anchors(text: str) -> dict[str, str]:
    return {c.section_heading: c.anchor for c in _chunks(text)}


PROSE = ("The mast carries the lidar and the camera boom, and it folds down for transport in the case. "
         "Its servo holds the mast upright while the robot drives, and parks it when the battery runs low.")


def test_several_imports_on_one_line_are_removed() -> None:
    body = _body(f"import Tabs from '@theme/Tabs'; import TabItem from '@theme/TabItem';\n\n{PROSE}\n")
    assert body == PROSE


def test_an_import_wrapped_over_two_lines_is_removed_and_a_sentence_starting_with_import_stays() -> None:
    body = _body(f"import GuideMacOS from\n  './_getting-started-macos.md';\n\n{PROSE}\n")
    assert body == PROSE
    text = "import the calibration file before the first run, or the mast drifts.\n"
    assert _body(text) == text.strip()  # no module string: a sentence, not a statement


def test_an_import_then_another_statement_on_its_line_is_removed() -> None:
    body = _body(f"import A from './_a.md'; export const year = 2024;\n\n{PROSE}\n")
    assert body == PROSE


def test_link_reference_comments_are_removed() -> None:
    body = _body(f"[//]: # 'macOS, Android'\n\n{PROSE}\n\n[comment]: <> (an old note)\n[//]: # \"two\"\n")
    assert body == PROSE
    # A definition cannot interrupt a paragraph: such a line continues it, and stays.
    assert "[note]: keep this line" in _body(f"{PROSE}\n[note]: keep this line, it continues the paragraph.\n")


def test_jsx_inside_a_heading_keeps_its_text_and_the_docusaurus_id() -> None:
    anchors = _anchors(f'### `elevation` <div className="label android">Android</div>\n\n{PROSE}\n')
    assert anchors == {"elevation Android": "elevation-android"}


def test_a_component_at_a_headings_end_leaves_the_space_before_it_in_the_id() -> None:
    # Docusaurus: a heading's id is the slug of its text, where a childless component adds nothing but
    # the space before it stays: "Props <Badge/>" -> "props-". Its props never reach the heading.
    anchors = _anchors(f'## Props <Badge text="stable" />\n\n{PROSE}\n\n## Style <em>and</em> theme\n\n{PROSE}\n')
    assert anchors == {"Props": "props-", "Style and theme": "style-and-theme"}


def test_a_jsx_comment_id_is_the_headings_explicit_id() -> None:
    anchors = _anchors(f"## Headings {{/* #my-heading-id */}}\n\n{PROSE}\n\n### Ids {{/* #my-id */}}\n\n{PROSE}\n")
    assert anchors == {"Headings": "my-heading-id", "Ids": "my-id"}


def test_an_h1_has_no_anchor_as_the_theme_renders_it_without_an_id() -> None:
    chunks = _chunks(f"# Orbiter kit\n\n{PROSE}\n\n## Orbiter kit\n\n{PROSE}\n")
    # The H1's slug is still taken: the H2 of the same text is numbered after it, as in the real build.
    assert [c.anchor for c in chunks] == ["", "orbiter-kit-1"]


def test_each_tab_keeps_its_label_or_its_value() -> None:
    text = (
        "## Install\n\n<Tabs>\n<TabItem value=\"npm\" label=\"npm\">\n\n```bash\nnpm i orbiter\n```\n\n</TabItem>\n"
        "<TabItem value=\"yarn\" label=\"Yarn\">\n\n```bash\nyarn add orbiter\n```\n\n</TabItem>\n"
        "<TabItem value=\"pnpm\">\n\n```bash\npnpm add orbiter\n```\n\n</TabItem>\n</Tabs>\n"
    )
    body = _body(text)
    assert "npm:\n\n```bash\nnpm i orbiter" in body
    assert "Yarn:\n\n```bash\nyarn add orbiter" in body
    assert "pnpm:\n\n```bash\npnpm add orbiter" in body
    assert "<" not in body


def test_a_details_summary_is_kept_as_a_label() -> None:
    body = _body(f"<details>\n<summary>Doctor reports a missing port</summary>\n\n{PROSE}\n\n</details>\n")
    assert body.startswith("Doctor reports a missing port:\n\n" + PROSE)
    question = _body(f"<details>\n  <summary>Why does it drift?</summary>\n\n{PROSE}\n</details>\n")
    assert question.startswith("Why does it drift?\n")  # a question is its own label


def test_an_admonition_component_keeps_its_title() -> None:
    body = _body(f'<Admonition type="tip" title="Fast path">\n\n{PROSE}\n\n</Admonition>\n')
    assert body.startswith("Tip: Fast path\n\n" + PROSE)


def test_a_component_with_string_props_contributes_their_text_never_raw_jsx() -> None:
    text = (
        "export const PropRow = ({name, description}) => (\n  <tr><td>{name}</td><td>{description}</td></tr>\n);\n\n"
        '<table>\n  <tbody>\n    <PropRow name="gap" type="number" description="Space between children." />\n'
        '    <TableRow\n      name="flexGrow"\n      description="How much the view grows."\n      value={2}\n    />\n'
        "  </tbody>\n</table>\n"
    )
    body = _body(text)
    assert "gap: Space between children." in body
    assert "flexGrow: How much the view grows." in body
    assert "<" not in body and "export" not in body and "{" not in body


def test_a_wide_tables_chunks_never_hold_only_its_syntax() -> None:
    columns = 24
    header = "| " + " | ".join(f"Column {c}" for c in range(columns)) + " |"
    sep = "|" + "|".join(":" + "-" * 30 + ":" for _ in range(columns)) + "|"
    rows = "\n".join("| " + " | ".join(f"r{r}c{c}" for c in range(columns)) + " |" for r in range(4))
    chunks = _chunks(f"## Matrix\n\n{PROSE}\n\n{header}\n{sep}\n{rows}\n")
    assert all("table_shard" not in artefacts(c.text, c.section_heading) for c in chunks)
    assert all("-" * 4 not in c.text for c in chunks)  # the delimiter row is compacted


def test_a_long_table_is_split_by_rows_under_its_header() -> None:
    sep = "| " + " | ".join("-" * 40 for _ in range(3)) + " |"
    rows = "\n".join(f"| sensor {i} | {10 + i} Hz | reports its state with a sequence number |" for i in range(40))
    chunks = _chunks(f"## Topics\n\n| Sensor | Rate | What |\n{sep}\n{rows}\n", max_tokens=120)
    table_chunks = [c for c in chunks if "sensor" in c.text]
    assert len(table_chunks) > 2
    for c in table_chunks:
        assert "| Sensor | Rate | What |\n| --- | --- | --- |\n| sensor" in c.text


# -- issue 35: imports as real sites write them, and rules that draw no text ------------------------------

PARTIALS = {"_setup.md": "## Setup\n\nThe setup partial installs the mast driver before the first run.\n",
            "../src/partials/_shared.md": "The shared partial lives in the site's src folder, outside the docs.\n",
            "../../outside.md": "Never read: this file is beyond the site folder.\n"}


def _with_partials(text: str, site: str | None = None) -> tuple[str, tuple[str, ...]]:
    doc = parse_document(text, "guide.mdx", PARTIALS.get, site=site)
    return doc.body, doc.warnings


def test_an_import_path_prettier_escaped_is_read_as_javascript_reads_it() -> None:
    # Prettier writes `_` in an MDX import as `\_`; the JavaScript string still names `./_setup.md`.
    body, warnings = _with_partials("import Setup from './\\_setup.md';\n\n# Guide\n\n<Setup />\n")
    assert "installs the mast driver" in body and warnings == ()


def test_a_site_alias_import_is_read_from_the_site_folder() -> None:
    text = "import Shared from '@site/src/partials/\\_shared.md';\n\n# Guide\n\n<Shared />\n"
    body, warnings = _with_partials(text, site="..")
    assert "lives in the site's src folder" in body and warnings == ()
    # A docs folder whose site is unknown cannot resolve it: a warning saying so, never a crash.
    body, warnings = _with_partials(text)
    assert "src folder" not in body and "no site folder is known" in warnings[0]


def test_an_import_beyond_the_site_folder_is_refused() -> None:
    text = "import Out from '../../outside.md';\n\n# Guide\n\nText.\n\n<Out />\n"
    body, warnings = _with_partials(text, site="..")
    assert "Never read" not in body and "outside the site folder" in warnings[0]


def test_a_thematic_break_never_becomes_a_chunk_of_dashes() -> None:
    # redux-docs' api/Store.md: a code example, then `---`, then the next heading. The rule drew nothing.
    code = "```js\nstore.dispatch(addTodo('Read the docs'))\n```"
    text = f"# Store\n\n## Example\n\n{code}\n\n---\n\n## Next\n\n{PROSE}\n"
    chunks = _chunks(text, max_tokens=40)
    assert [c for c in chunks if artefacts(c.text, c.section_heading)] == []
    assert all("---" not in c.text for c in chunks)


def test_a_partials_h1_never_titles_the_page_that_renders_it() -> None:
    # Checked on a real build: Docusaurus titles a page from its front matter, else its own first H1, else
    # its id; a partial's H1 is rendered below that title, never promoted to it.
    partials = {"_intro.md": "---\ntitle: Intro partial\n---\n\n# Welcome from the partial\n\nHello text.\n"}
    own = parse_document("---\ntitle: Page A\n---\nimport Intro from './_intro.md';\n\n<Intro />\n\n## Own\n\nText.\n",
                         "page-a.mdx", partials.get)
    bare = parse_document("import Intro from './_intro.md';\n\n<Intro />\n\n## Own\n\nText.\n", "page-b.mdx",
                          partials.get)
    assert own.title == "Page A" and bare.title == "Page B"
    assert "Intro partial" not in own.body and "Welcome from the partial" in bare.body
