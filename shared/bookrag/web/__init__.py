"""The HTTP interface: a FastAPI app served by Mangum in Lambda and by uvicorn locally."""
