"""A stateful stand-in for the part of Qdrant's REST API that versions use: collections and aliases.

It answers the requests qdrant-client 1.20 sends (qdrant_client/http/api/aliases_api.py and
collections_api.py): `GET /aliases`, `GET /collections`, `POST /collections/aliases` (a list of
`delete_alias`/`create_alias`/`rename_alias` actions, applied all or none, as Qdrant does),
`DELETE /collections/{name}`, `GET /collections/{name}` and `GET /collections/{name}/exists`,
in Qdrant's `{"result": ..., "status": "ok", "time": ...}` envelope. An alias name resolves to its
collection on the collection paths, as on a server.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from tests.support.stubs import Recorded, Reply, StubServer
from tests.support.upstreams import qdrant_collection_info, qdrant_ok


def _not_found(name: str) -> Reply:
    return Reply(404, {"status": {"error": f"Not found: Collection `{name}` doesn't exist!"}, "time": 0.0})


@dataclass
class QdrantAliases:
    """Collections (name -> collection metadata) and aliases (alias -> collection)."""

    collections: dict[str, dict[str, Any]] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def serve(self, stub: StubServer) -> QdrantAliases:
        stub.on("/aliases", self._aliases)
        stub.on("/collections/aliases", self._change)
        stub.on("/collections", self._collections)
        return self

    def _aliases(self, req: Recorded) -> Reply:
        with self.lock:
            return qdrant_ok({"aliases": [{"alias_name": a, "collection_name": c} for a, c in self.aliases.items()]})

    def _change(self, req: Recorded) -> Reply:
        actions = req.json()["actions"]
        with self.lock:
            aliases = dict(self.aliases)
            for action in actions:
                if "delete_alias" in action:
                    name = action["delete_alias"]["alias_name"]
                    if name not in aliases:
                        return _not_found(name)
                    del aliases[name]
                elif "create_alias" in action:
                    spec = action["create_alias"]
                    if spec["collection_name"] not in self.collections or spec["alias_name"] in self.collections:
                        return Reply(400, {"status": {"error": "Wrong input"}, "time": 0.0})
                    aliases[spec["alias_name"]] = spec["collection_name"]
                else:
                    spec = action["rename_alias"]
                    aliases[spec["new_alias_name"]] = aliases.pop(spec["old_alias_name"])
            self.aliases = aliases
        return qdrant_ok(True)

    def _collections(self, req: Recorded) -> Reply:
        path = req.path.split("?", 1)[0]
        parts = [unquote(p) for p in path.split("/")[2:]]
        with self.lock:
            if not parts:
                return qdrant_ok({"collections": [{"name": n} for n in sorted(self.collections)]})
            name = self.aliases.get(parts[0], parts[0])
            if parts[1:] == ["exists"]:
                return qdrant_ok({"exists": name in self.collections})
            if name not in self.collections:
                return _not_found(parts[0])
            if req.method == "DELETE":
                del self.collections[name]
                self.aliases = {a: c for a, c in self.aliases.items() if c != name}
                return qdrant_ok(True)
            info = qdrant_collection_info()
            body = json.loads(json.dumps(info.body))
            body["result"]["config"]["metadata"].update(self.collections[name])
            return Reply(200, body)
