"""The Lambda runtime: event dispatch, warm-ups, SnapStart hooks, the synthetic context."""
