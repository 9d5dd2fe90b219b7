"""The GPU sizing's model figures against llama.cpp's own: each embedded model loaded (on this
CPU build the buffers are the same arithmetic as on a GPU), its KV cache and compute buffers as
llama.cpp reports them in its log, and the estimate from the GGUF header alone."""

from __future__ import annotations

import logging
import re

import pytest

from daemon.engine.gpu_sizing import kv_streams, model_memory
from daemon.settings import load_settings
from models.loaded import LoadedModel
from models.resolve import resolve_model

N_CTX = 1024
N_BATCH = 512
KV_SIZE = re.compile(r"llama_kv_cache: size = +([\d.]+) MiB \( *\d+ cells, +\d+ layers, +(\d+)/")
COMPUTE = re.compile(r"compute buffer size = +([\d.]+) MiB")


@pytest.mark.parametrize("name", ["qwen2.5-coder-0.5b", "gemma-3-270m"])
def test_the_estimate_from_the_header_agrees_with_llama_cpp(name, caplog):
    resolved = resolve_model(None, load_settings().cache_dir, name)
    streams = kv_streams(parallel=2, kv_slots=2)
    with caplog.at_level(logging.DEBUG, logger="llama.cpp"):
        model = LoadedModel(resolved, N_CTX, N_BATCH, 1, 0, None, None, sequences=streams)
        model.close()
    log = "\n".join(record.getMessage() for record in caplog.records)
    # The context of that many streams (the first one llama-cpp-python made has one).
    kv_mib = sum(float(size) for size, seqs in KV_SIZE.findall(log) if int(seqs) == streams)
    compute_mib = max(float(size) for size in COMPUTE.findall(log))
    estimate = model_memory(resolved.header, resolved.path.stat().st_size, -1, N_BATCH, N_CTX)
    assert estimate is not None
    # Keys and values of every token in every stream: exactly llama.cpp's KV cache.
    assert estimate.kv_bytes_per_token * N_CTX * streams == kv_mib * 2**20
    # The compute buffers: never under llama.cpp's, and not far over.
    assert compute_mib * 2**20 <= estimate.compute_bytes <= 1.5 * compute_mib * 2**20
    # The weights: the file, a little more than llama.cpp's tensors.
    assert estimate.weight_bytes == resolved.path.stat().st_size
    print(
        f"{name}: KV {kv_mib} MiB for {streams} x {N_CTX} tokens "
        f"({estimate.kv_bytes_per_token} bytes a token); compute {compute_mib} MiB, "
        f"estimated {estimate.compute_bytes / 2**20:.1f} MiB"
    )
