"""Generation on remote servers, behind the same engine interface as the local model.
OpenAI-compatible completion servers: llama.cpp's server, vLLM, llama-cpp-python's server.
"""
