"""A safetensors reader that hashes what it reads in the same pass.

The local embedder checks the weights file's sha256 before trusting it; reading the file once to hash
it and again to parse it (as the `safetensors` package would) costs a second pass and 66 MB more peak
memory at load, so this reader feeds every byte to the digest as it parses (about 40 lines).
"""

from __future__ import annotations

import json
from io import BufferedReader
from typing import Any, Final

import numpy as np


class FormatError(Exception):
    """model.safetensors does not parse (internal: reported as an EmbeddingError)."""



# safetensors dtype -> numpy dtype (little-endian, as the format stores them); BF16 has no numpy type.
_SAFETENSORS_DTYPES: Final = {
    "F64": "<f8",
    "F32": "<f4",
    "F16": "<f2",
    "I64": "<i8",
    "I32": "<i4",
    "I16": "<i2",
    "I8": "i1",
    "U8": "u1",
    "BOOL": "?",
}



_MAX_HEADER_BYTES: Final = 100_000_000  # the format's own limit



def _read_into(fh: BufferedReader, buffer: memoryview, digest: Any) -> None:
    view = buffer.cast("B")
    done = 0
    while done < len(view):
        n = fh.readinto(view[done:])
        if not n:
            raise FormatError("truncated")
        done += n
    digest.update(view)



def read_safetensors(fh: BufferedReader, digest: Any) -> dict[str, np.ndarray]:
    """Parse a safetensors stream (8-byte header length, JSON header, packed tensor data) into arrays.

    Every byte read is fed to `digest`, in file order. Raises `FormatError` on anything malformed:
    a bad header, a dtype numpy lacks, tensors that overlap, leave gaps, or overrun the file.
    """
    head = bytearray(8)
    _read_into(fh, memoryview(head), digest)
    size = int.from_bytes(head, "little")
    if not 2 <= size <= _MAX_HEADER_BYTES:
        raise FormatError("header size")
    raw = bytearray(size)
    _read_into(fh, memoryview(raw), digest)
    try:
        header = json.loads(raw)
        entries = sorted(
            (
                int(v["data_offsets"][0]),
                int(v["data_offsets"][1]),
                name,
                np.dtype(_SAFETENSORS_DTYPES[v["dtype"]]),
                tuple(int(d) for d in v["shape"]),
            )
            for name, v in header.items()
            if name != "__metadata__"
        )
    except (ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
        raise FormatError("header") from exc
    tensors: dict[str, np.ndarray] = {}
    position = 0
    for begin, end, name, dtype, shape in entries:
        if any(d < 0 for d in shape):
            raise FormatError("shape")
        array = np.empty(shape, dtype=dtype)
        if begin != position or end - begin != array.nbytes:
            raise FormatError("layout")
        _read_into(fh, memoryview(array), digest)  # type: ignore[arg-type]
        tensors[name] = array
        position = end
    if fh.read(1):
        raise FormatError("trailing bytes")
    return tensors
