"""pyproject.toml as the build tools read it: setuptools stops building the TOML-table form of
`project.license` after 2027-02-18 (its deprecation warning on every `make demo`), so it is an SPDX string."""

from __future__ import annotations

import re
import tomllib

from tests.support.paths import ROOT


def test_the_license_is_an_spdx_expression_a_current_setuptools_builds() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert pyproject["project"]["license"] == "MIT"
    assert not any(c.startswith("License ::") for c in pyproject["project"].get("classifiers", []))
    # PEP 639's string form needs setuptools 77 or later in the build environment.
    floor = next(r for r in pyproject["build-system"]["requires"] if r.startswith("setuptools"))
    match = re.fullmatch(r"setuptools>=(\d+)(?:\.\d+)*", floor)
    assert match and int(match.group(1)) >= 77
