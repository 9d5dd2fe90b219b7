"""Models: resolution, families and prompt formats, GGUF metadata, the weights' fingerprint."""
