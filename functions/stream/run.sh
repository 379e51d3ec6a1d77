#!/bin/bash
# The stream function's "handler": the Lambda Web Adapter's wrapper (AWS_LAMBDA_EXEC_WRAPPER=/opt/bootstrap)
# runs ${LAMBDA_TASK_ROOT}/${_HANDLER}, this script. It starts the agent's ASGI app under uvicorn (already in
# the layer, a dependency of mcp) on 127.0.0.1:$PORT; the adapter waits for AWS_LWA_READINESS_CHECK_PATH to
# answer, then turns each function URL invocation into an HTTP request to it and streams the response back.
PYTHONPATH="$PYTHONPATH:/opt/python:$LAMBDA_RUNTIME_DIR" exec python3 -m uvicorn --factory \
    bookrag.runtime.web_adapter:create --host 127.0.0.1 --port "$PORT" --no-access-log --no-server-header
