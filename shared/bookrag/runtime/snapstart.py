"""SnapStart hooks: warm before Lambda takes the snapshot, fresh network clients after each restore.

A restored container starts fully initialised (the warm-up ran before the snapshot). After a
restore, the containers drop exactly the components that hold connections (stale in a restored
microVM; see `Container.reset_network`), so they are rebuilt on first use, while the embedded store
and the local model stay in the snapshot.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Literal

from bookrag.observability import logger, restart_uptime
from bookrag.runtime.http import FunctionKind

HookKind = Literal["before_snapshot", "after_restore"]

_hooks: dict[HookKind, list[Callable[[], None]]] = {"before_snapshot": [], "after_restore": []}
_installed: set[str] = set()


def after_restore() -> None:
    """Forget every network client; re-seed `random` (a restore would replay the snapshot's sequence)
    and restart the uptime clock."""
    from bookrag.services.container import existing

    dropped = sorted({name for container in existing() for name in container.reset_network()})
    random.seed()
    restart_uptime()
    logger.info("restored from a snapshot: network clients will be rebuilt on first use",
                extra={"dropped": dropped})


def _before_snapshot(kind: FunctionKind) -> None:
    from bookrag.runtime.warmup import warm

    try:
        warm(kind)
        if kind == "agent":
            # This function serves /mcp: the snapshot holds the MCP SDK, so a restored container's first
            # MCP request imports nothing. (A scheduled warm-up does not load it; health never does.)
            from bookrag.mcp.asgi import prepare

            prepare()
    except Exception as exc:  # a warm-up failure must not fail the deployment: the snapshot is just colder
        logger.warning("before-snapshot warm-up failed", extra={"error_class": type(exc).__name__})


def _register(hook: HookKind, fn: Callable[[], None]) -> None:
    _hooks[hook].append(fn)
    try:
        import snapshot_restore_py  # only in Lambda's managed Python runtimes (3.12+)
    except ImportError:
        return
    getattr(snapshot_restore_py, f"register_{hook}")(fn)


def install_snapstart_hooks(kind: FunctionKind) -> None:
    """Register this function's SnapStart runtime hooks once per process (no-op registration locally)."""
    if kind in _installed:
        return
    if not _installed:
        _register("after_restore", after_restore)
    _installed.add(kind)
    _register("before_snapshot", lambda: _before_snapshot(kind))


def registered_hooks(hook: HookKind) -> list[Callable[[], None]]:
    """The callables registered for `hook`, in registration order (tests call them as Lambda would)."""
    return list(_hooks[hook])
