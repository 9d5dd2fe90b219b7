"""Generation on remote servers: OpenAI-compatible completion servers (llama.cpp's server,
vLLM, llama-cpp-python's server) behind the same engine interface as the local model."""
