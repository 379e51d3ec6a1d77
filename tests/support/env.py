"""The environment variables our settings and the Cohere SDK read: no test inherits the developer's values."""

from __future__ import annotations

import os

import pytest

from bookrag.config.settings import Settings

OUR_VARS = {name.upper() for name in Settings.model_fields} | {"CO_API_KEY", "CO_API_URL"}


def clear_our_vars(monkeypatch: pytest.MonkeyPatch) -> None:
    """Unset every variable of ours (in any letter case, as pydantic-settings matches them)."""
    for name in list(os.environ):
        if name.upper() in OUR_VARS:
            monkeypatch.delenv(name)
