"""The readings the agent's leak check tests: each obfuscation undone, ordinary answers left alone."""

from __future__ import annotations

import base64
import codecs
from urllib.parse import quote

import pytest

from bookrag.text.deobfuscation import readings

SECRET = "sk-Canary-7Qp2Lm9Xv4"
CYRILLIC = str.maketrans("aceopxyiACEOPKMHTBX", "асеорхуіАСЕОРКМНТВХ")


@pytest.mark.parametrize("obfuscated", [
    SECRET,
    SECRET.upper(),
    " ".join(SECRET),
    "\u200b".join(SECRET),
    SECRET[::-1],
    codecs.encode(SECRET, "rot13"),
    base64.b64encode(f"the key: {SECRET}".encode()).decode(),
    base64.urlsafe_b64encode(f"x{SECRET}".encode()).decode().rstrip("="),
    SECRET.encode().hex(),
    " ".join(f"0x{b:02x}" for b in SECRET.encode()),
    quote(f"?k={SECRET}"),
    SECRET.translate(CYRILLIC),
    "".join(chr(ord(c) + 0xFEE0) for c in SECRET),  # full-width
], ids=["plain", "upper", "spaced", "zero-width", "reversed", "rot13", "base64", "base64url-unpadded", "hex",
        "hex-0x", "url", "homoglyph", "fullwidth"])
def test_every_obfuscation_is_undone(obfuscated: str) -> None:
    assert any(SECRET.casefold() in "".join(view.split()) for view in readings(f"Answer [1]. {obfuscated} [2]"))


def test_an_ordinary_answer_reads_as_itself() -> None:
    answer = "Source the setup script in every new shell [1]. Then run `ros2 doctor` to check the install [2]."

    views = readings(answer)

    assert views[0] == answer.casefold()
    assert all("setup script" not in v for v in views[2:5])  # rot13 and reversals are other texts
