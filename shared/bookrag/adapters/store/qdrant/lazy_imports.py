"""Cheaper imports of the heavy SDKs on a cold start, each falling back to the plain import.

qdrant-client is the largest single import of a retrieval cold start (~0.6 s here). About 40% of it is
not importing at all: `qdrant_client.http`'s `__init__` calls `model_rebuild()` on every one of its
~400 REST models at import time. pydantic v2 rebuilds an incomplete model by itself the first time it
is validated or serialised, so that loop only front-loads work for models this service never uses;
the few a search needs (`Prefetch`, `RrfQuery`, ...) are rebuilt on first use (~30 ms, paid by the
scheduled warm-up, not by a request).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import threading
from collections.abc import Sequence
from types import ModuleType
from typing import Any

_lock = threading.Lock()
_REST_PACKAGE = "qdrant_client.http"


def _skip_rebuild(model_class: Any, *args: Any, **kwargs: Any) -> None:
    """Stands in for qdrant_client's `update_forward_refs` while its REST models are imported."""


class _NoEagerRebuildLoader(importlib.abc.Loader):
    """Runs `qdrant_client.http`'s own loader with `update_forward_refs` swapped for a no-op."""

    def __init__(self, inner: importlib.abc.Loader) -> None:
        self.inner = inner

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        try:
            compat = importlib.import_module("qdrant_client._pydantic_compat")
            original = compat.update_forward_refs
            swap = bool(getattr(compat, "PYDANTIC_V2", False))
        except (ImportError, AttributeError):  # another layout: import it as it is
            swap = False
        if not swap:
            self.inner.exec_module(module)
            return
        setattr(compat, "update_forward_refs", _skip_rebuild)  # noqa: B010 - swapped for this one import
        try:
            self.inner.exec_module(module)
        finally:
            setattr(compat, "update_forward_refs", original)  # noqa: B010


class _NoEagerRebuildFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != _REST_PACKAGE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _NoEagerRebuildLoader(spec.loader)
        return spec


def import_qdrant_client() -> ModuleType:
    """Import `qdrant_client` without its eager model rebuild (~0.25 s saved); same module, same API.

    The import runs through Python's normal machinery (module locks included), with a finder on
    `sys.meta_path` for the duration of this one import that swaps qdrant_client's
    `update_forward_refs` for a no-op while `qdrant_client.http` executes. A layout it does not
    recognise is imported unchanged.
    """
    module = sys.modules.get("qdrant_client")
    if module is not None:
        return module
    with _lock:
        finder = _NoEagerRebuildFinder()
        sys.meta_path.insert(0, finder)
        try:
            return importlib.import_module("qdrant_client")
        finally:
            sys.meta_path.remove(finder)
