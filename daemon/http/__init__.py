"""The HTTP layer: the FastAPI app, typed errors mapped to statuses, request bodies, NDJSON
streaming, rate limits, and starting the daemon."""
