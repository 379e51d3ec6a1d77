"""The agent's leak check: whether a model's output holds a configured secret or a passage of the system prompt,
also when encoded.

A model that obeys injected text and is asked to reveal its prompt or a key can encode it to slip past a plain
substring test; the check tests every reading of the output with those encodings undone (`text.deobfuscation`).
It cannot undo a translation or a paraphrase: that is why the system prompt holds no secret and keys never enter
a prompt.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pydantic import SecretStr

from bookrag.text.deobfuscation import readings

if TYPE_CHECKING:
    from bookrag.config.settings import Settings

# Six words: the shortest rule line of the system prompt is seven.
_FINGERPRINT_WORDS = 6


class LeakGuard:
    """Whether a text holds a configured secret or a passage of the system prompt, also encoded (base64,
    hex, rot13, URL-encoded, reversed, spaced, zero-width or look-alike letters: `readings`)."""

    def __init__(self, secrets: list[str], prompt: str) -> None:
        self._secrets = secrets
        self._prompt_shingles = _shingles(prompt)  # "|" separates phrases that may be quoted freely

    def leaks(self, text: str) -> bool:
        for view in readings(text):  # case-folded
            squeezed = "".join(view.split())
            if any(secret.casefold() in squeezed for secret in self._secrets):
                return True
            if _shingles(view) & self._prompt_shingles:
                return True
        return False


def secret_values(settings: Settings) -> list[str]:
    """Every secret the settings hold (six characters or more: shorter ones match ordinary words)."""
    values = []
    for name in type(settings).model_fields:
        value = getattr(settings, name)
        if isinstance(value, SecretStr) and len(value.get_secret_value()) >= 6:
            values.append(value.get_secret_value())
    return values


def _shingles(text: str) -> set[tuple[str, ...]]:
    out: set[tuple[str, ...]] = set()
    for segment in text.split("|"):
        words = re.findall(r"[a-z0-9]+", segment.lower())
        out.update(tuple(words[i:i + _FINGERPRINT_WORDS]) for i in range(len(words) - _FINGERPRINT_WORDS + 1))
    return out
