"""Session stores behind `domain.conversation.SessionStore`: in memory (`bookrag serve`, tests) and
DynamoDB (Lambda, `SESSIONS_TABLE`).

A session item (template.yaml `SessionsTable`): partition key `session_id`; `owner` (the API key id
that created it), `turns` (JSON: a list of {question, answer, standalone}), `expires_at` (epoch
seconds, the table's TTL attribute). DynamoDB deletes expired items lazily (up to days later), so a
read checks `expires_at` itself. The boto3 client is the container's (short timeouts, one retry);
botocore errors become `SessionStoreError`, never shown to a caller.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any

from bookrag.domain.conversation import Session, Turn
from bookrag.errors import SessionNotFoundError, SessionStoreError


def encode_turns(turns: tuple[Turn, ...]) -> str:
    return json.dumps([{"question": t.question, "answer": t.answer, "standalone": t.standalone} for t in turns],
                      ensure_ascii=False, separators=(",", ":"))


def decode_turns(raw: str) -> tuple[Turn, ...]:
    """Turns from their JSON; a malformed entry is skipped (a bad item must not break a conversation)."""
    try:
        items = json.loads(raw)
    except ValueError:
        return ()
    out = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and isinstance(item.get("question"), str):
            out.append(Turn(question=item["question"], answer=str(item.get("answer") or ""),
                            standalone=str(item.get("standalone") or "")))
    return tuple(out)


class InMemorySessionStore:
    """Sessions of one process, least recently used dropped past `max_sessions`. Thread-safe."""

    def __init__(self, max_sessions: int = 10_000) -> None:
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._max = max_sessions
        self._lock = threading.Lock()

    def get(self, session_id: str, now: int) -> Session | None:
        with self._lock:
            session = self._sessions.get(session_id)
            if session is None:
                return None
            if session.expires_at <= now:
                del self._sessions[session_id]
                return None
            self._sessions.move_to_end(session_id)
            return session

    def put(self, session: Session) -> None:
        with self._lock:
            self._sessions[session.session_id] = session
            self._sessions.move_to_end(session.session_id)
            while len(self._sessions) > self._max:
                self._sessions.popitem(last=False)

    def delete(self, session_id: str) -> None:
        with self._lock:
            self._sessions.pop(session_id, None)


class DynamoDBSessionStore:
    """One GetItem (strongly consistent: the next turn must see the last) per read, one PutItem per write."""

    def __init__(self, client: Any, table: str) -> None:
        self._client = client
        self._table = table

    def get(self, session_id: str, now: int) -> Session | None:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            response = self._client.get_item(TableName=self._table, Key={"session_id": {"S": session_id}},
                                             ConsistentRead=True)
        except (BotoCoreError, ClientError) as exc:
            raise SessionStoreError() from exc
        item = response.get("Item")
        if not item:
            return None
        try:
            session = Session(session_id=item["session_id"]["S"], owner=item["owner"]["S"],
                              turns=decode_turns(item.get("turns", {}).get("S", "[]")),
                              expires_at=int(item["expires_at"]["N"]))
        except (KeyError, TypeError, ValueError):
            return None  # a malformed item is no one's session
        return session if session.expires_at > now else None

    def put(self, session: Session) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        item = {"session_id": {"S": session.session_id}, "owner": {"S": session.owner},
                "turns": {"S": encode_turns(session.turns)}, "expires_at": {"N": str(session.expires_at)}}
        try:
            # The condition keeps a write from ever taking over another owner's session id.
            self._client.put_item(TableName=self._table, Item=item,
                                  ConditionExpression="attribute_not_exists(session_id) OR #o = :owner",
                                  ExpressionAttributeNames={"#o": "owner"},
                                  ExpressionAttributeValues={":owner": {"S": session.owner}})
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                raise SessionNotFoundError() from None
            raise SessionStoreError() from exc
        except BotoCoreError as exc:
            raise SessionStoreError() from exc

    def delete(self, session_id: str) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self._client.delete_item(TableName=self._table, Key={"session_id": {"S": session_id}})
        except (BotoCoreError, ClientError) as exc:
            raise SessionStoreError() from exc
