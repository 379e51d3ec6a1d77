"""Question log stores behind `domain.question_log.QuestionLog`: a folder of JSON lines (`local.py`,
`bookrag serve` and the report on a laptop) and DynamoDB (Lambda, `QUESTION_LOG_TABLE`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bookrag.config.settings import Settings
    from bookrag.domain.question_log import QuestionLog


def build_question_log(settings: Settings, dynamodb: Callable[[], Any]) -> QuestionLog | None:
    """The store the settings name, or None when the log is off; `dynamodb` gives the container's client
    (asked only when a table is set)."""
    if settings.question_log == "off":
        return None
    if settings.question_log_table:
        from bookrag.adapters.question_log.dynamodb import DynamoDBQuestionLog

        return DynamoDBQuestionLog(dynamodb(), settings.question_log_table,
                                   retention_days=settings.question_log_retention_days)
    from bookrag.adapters.question_log.local import LocalQuestionLog

    return LocalQuestionLog(settings.question_log_path, retention_days=settings.question_log_retention_days)
