"""A text as a reader who undoes common obfuscations would see it: base64, hex, rot13, URL encoding, reversed,
spaced out, interleaved with zero-width characters, or written with look-alike letters (Cyrillic "а" for Latin
"a"). `readings(text)` returns each such view, case-folded, so that a check for a string (the agent's leak check,
`answering.deobfuscation`) can test every one. It cannot undo a translation or a paraphrase.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import re
import unicodedata
from urllib.parse import unquote_plus

__all__ = ["MAX_DECODED_RUNS", "readings"]

# Cyrillic and Greek letters that render like Latin ones (the common subset of Unicode's confusables).
_LOOKALIKES = str.maketrans({
    "а": "a", "в": "b", "е": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t",
    "у": "y", "х": "x", "і": "i", "ј": "j", "ѕ": "s", "һ": "h", "ԁ": "d", "ԛ": "q", "ԝ": "w", "ɡ": "g",
    "α": "a", "β": "b", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "υ": "u",
    "χ": "x", "ϲ": "c",
})
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{12,}={0,2}")
_HEX_RUN = re.compile(r"(?:[0-9a-fA-F]{2}){6,}")
_HEX_NOISE = re.compile(r"0x|\\x|[\s:,]")
MAX_DECODED_RUNS = 64  # bound the work on a long answer


def _plain(text: str) -> str:
    """NFKC (full-width and styled letters), invisible format characters dropped, look-alikes folded."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    return text.casefold().translate(_LOOKALIKES)


def _decoded_runs(text: str) -> list[str]:
    out: list[str] = []
    for run in _BASE64_RUN.findall(text)[:MAX_DECODED_RUNS]:
        stripped = run.rstrip("=")
        for candidate in (stripped, stripped[:-1]):  # a run may carry one character too many
            padded = candidate + "=" * (-len(candidate) % 4)
            try:
                raw = base64.urlsafe_b64decode(padded.replace("+", "-").replace("/", "_"))
            except (binascii.Error, ValueError):
                continue
            out.append(raw.decode("utf-8", "ignore"))
            break
    for run in _HEX_RUN.findall(_HEX_NOISE.sub("", text))[:MAX_DECODED_RUNS]:
        out.append(bytes.fromhex(run).decode("utf-8", "ignore"))
    return out


def readings(text: str) -> list[str]:
    """`text` case-folded as is, and as read after undoing each obfuscation above (one level deep)."""
    plain = _plain(text)
    squeezed = "".join(plain.split())
    views = [plain, squeezed, codecs.encode(plain, "rot13"), plain[::-1], squeezed[::-1], _plain(unquote_plus(text))]
    # Encodings are case-sensitive: decode the original text (format characters dropped), not the folded one.
    visible = "".join(ch for ch in unicodedata.normalize("NFKC", text) if unicodedata.category(ch) != "Cf")
    views.extend(_plain(decoded) for decoded in _decoded_runs(visible))
    return views
