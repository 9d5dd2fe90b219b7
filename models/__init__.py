"""Model resolution and model families: the embedded default model, GGUF metadata, prompt
formats with their FIM tokens and stop sequences, and the weights' fingerprint."""
