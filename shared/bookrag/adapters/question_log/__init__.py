"""Question log stores behind `domain.question_log.QuestionLog`: a folder of JSON lines (`local.py`,
`bookrag serve` and the report on a laptop) and DynamoDB (Lambda, `QUESTION_LOG_TABLE`)."""
