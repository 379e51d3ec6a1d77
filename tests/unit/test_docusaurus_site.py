"""A Docusaurus site folder read as its editions (issue 35): the configuration as literal data, never run,
and each locale and version where Docusaurus serves it (the rules checked against a real build of
`tests/fixtures/site-book` in `tests/integration/test_docusaurus_site.py`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bookrag.errors import DocumentError
from bookrag.ingestion.docusaurus_site import edition_base_url, read_site
from bookrag.ingestion.js_literal import UNKNOWN, read_config_object
from tests.support.paths import FIXTURES


def _site(tmp_path: Path, docs_options: str, versions: list[str] = (), locales: str = "['en']") -> Path:
    (tmp_path / "docusaurus.config.js").write_text(
        "// @ts-check\nimport {themes} from 'prism-react-renderer';\n"
        "export default {\n  title: `Book`, url: process.env.URL,\n"
        f"  i18n: {{defaultLocale: 'en', locales: {locales}}},\n"
        f"  presets: [['classic', /** @type */ ({{docs: {docs_options}, blog: false}})]],\n}};\n")
    (tmp_path / "docs").mkdir()
    if versions:
        (tmp_path / "versions.json").write_text(json.dumps(list(versions)))
        for name in versions:
            (tmp_path / "versioned_docs" / f"version-{name}").mkdir(parents=True)
    return tmp_path


def _served(site: Path) -> dict[tuple[str, str], str]:
    return {(e.locale, e.version): e.url_path for e in read_site(site).editions}


def test_the_literal_configuration_is_read_and_computed_values_are_unknown() -> None:
    source = ("const locales = ['en', 'ur'];\nconst config = {\n  // a comment\n  url: process.env.SITE,\n"
              "  i18n: {defaultLocale: 'en', locales, localeConfigs: {ur: {direction: 'rtl'}}},\n"
              "  plugins: [...more, require('x')],\n  presets: [['classic', ({docs: {lastVersion: 'current'}})]],\n};\n"
              "module.exports = config;\n")
    config = read_config_object(source)
    assert config["i18n"]["locales"] == ["en", "ur"] and config["url"] is UNKNOWN
    assert config["presets"] == [["classic", {"docs": {"lastVersion": "current"}}]]
    assert read_config_object("module.exports = async () => ({title: 'x'});") == {"title": "x"}
    assert read_config_object("module.exports = function () { return {title: 'x'}; };") == {}


def test_an_export_named_in_a_comment_or_a_string_is_not_the_export() -> None:
    assert read_config_object("/* module.exports = below */ module.exports = {title: 'B'};") == {"title": "B"}
    assert read_config_object("// export default is not used\nmodule.exports = {title: 'A'};") == {"title": "A"}
    assert read_config_object("const x = 'module.exports = '; module.exports = {title: 'C'};") == {"title": "C"}


def test_the_newest_release_is_served_at_the_route_base_and_the_current_docs_at_next(tmp_path: Path) -> None:
    # Docusaurus's defaults: lastVersion is versions.json's first entry; the docs folder is `next`.
    site = _site(tmp_path, "{}", ["2.0", "1.0"], "['en', 'ur']")
    assert _served(site) == {("en", "current"): "/docs/next", ("en", "2.0"): "/docs", ("en", "1.0"): "/docs/1.0",
                             ("ur", "current"): "/ur/docs/next", ("ur", "2.0"): "/ur/docs",
                             ("ur", "1.0"): "/ur/docs/1.0"}


def test_route_base_last_version_only_included_versions_and_a_versions_own_path(tmp_path: Path) -> None:
    options = ("{routeBasePath: '/', lastVersion: 'current', onlyIncludeVersions: ['current', '2.0'], "
               "versions: {'2.0': {path: 'two'}}}")
    site = _site(tmp_path, options, ["2.0", "1.0"])
    assert _served(site) == {("en", "current"): "", ("en", "2.0"): "/two"}
    edition = read_site(site).editions[1]
    assert edition_base_url("https://book.example", edition) == "https://book.example/two"


def test_the_fixture_sites_editions_and_their_urls() -> None:
    site = read_site(FIXTURES / "site-book")
    urls = {(e.locale, e.version): edition_base_url("http://localhost:3000/docs", e) for e in site.editions}
    assert urls == {("en", "current"): "http://localhost:3000/docs", ("en", "2.0"): "http://localhost:3000/docs/2.0",
                    ("ur", "current"): "http://localhost:3000/ur/docs",
                    ("ur", "2.0"): "http://localhost:3000/ur/docs/2.0"}
    assert site.warnings == ()


def test_a_site_docusaurus_would_refuse_is_refused_with_a_reason(tmp_path: Path) -> None:
    with pytest.raises(DocumentError, match="lastVersion"):
        read_site(_site(tmp_path, "{lastVersion: '9.0'}"))
    with pytest.raises(DocumentError, match="not a Docusaurus site"):
        read_site(tmp_path / "docs")
