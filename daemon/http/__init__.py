"""The HTTP layer: the FastAPI app, errors, request bodies, NDJSON, rate limits, start-up."""
