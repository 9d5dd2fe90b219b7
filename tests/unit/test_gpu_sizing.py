"""Sizing the engine to a GPU: given device and model figures, the most jobs, documents and
context that fit in ``gpu_memory_share`` of the free memory, the settings given kept."""

from __future__ import annotations

import dataclasses

import pytest

from daemon.engine.gpu_sizing import (
    DEVICE_RESERVE_BYTES,
    GIB,
    MOST_KV_SLOTS,
    MOST_PARALLEL,
    DeviceMemory,
    EngineSize,
    ModelMemory,
    kv_streams,
    model_memory,
    size_engine,
)
from models.gguf import ArraySummary, GGUFHeader

DEFAULTS = EngineSize(parallel=4, kv_slots=8, n_ctx=4096)
FLOOR = 2048  # the default prompt budget and answer, rounded up
GB = 10**9


def header(arch: str, layers: int, width: int, heads: int, kv_heads: int, **extra) -> GGUFHeader:
    metadata = {
        "general.architecture": arch,
        f"{arch}.block_count": layers,
        f"{arch}.embedding_length": width,
        f"{arch}.attention.head_count": heads,
        f"{arch}.attention.head_count_kv": kv_heads,
        "tokenizer.ggml.tokens": ArraySummary(8, extra.pop("vocabulary", 152064)),
    }
    metadata.update({f"{arch}.{key.replace('__', '.')}": value for key, value in extra.items()})
    return GGUFHeader(version=3, tensor_count=0, metadata=metadata)


# Qwen2.5-Coder 7B and 32B, Q4_K_M: their GGUF headers' figures and file sizes.
QWEN_7B = header("qwen2", 28, 3584, 28, 4)
QWEN_7B_BYTES = 4_683_074_048
QWEN_32B = header("qwen2", 64, 5120, 40, 8)
QWEN_32B_BYTES = 19_851_336_256


def seven_b(layers: int = -1) -> ModelMemory:
    found = model_memory(QWEN_7B, QWEN_7B_BYTES, layers, 512, 4096)
    assert found is not None
    return found


def gpu(total_gb: float, used_gb: float = 0.4, name: str = "GPU") -> DeviceMemory:
    """A GPU of ``total_gb`` (as sold: GB) of which the driver and others use ``used_gb``."""
    total = int(total_gb * GB)
    return DeviceMemory(total, total - int(used_gb * GB), (name,), "NVML")


def planned(device: DeviceMemory, model: ModelMemory, size: EngineSize) -> int:
    """What the engine of ``size`` takes: weights, buffers, reserve and every KV stream."""
    streams = kv_streams(size.parallel, size.kv_slots)
    kv = streams * size.n_ctx * model.kv_bytes_per_token
    return model.weight_bytes + model.compute_bytes + DEVICE_RESERVE_BYTES + kv


def test_the_models_figures_come_from_its_header():
    model = seven_b()
    # 28 layers x 4 KV heads x (128 + 128) numbers of 2 bytes (f16): 56 KiB a token.
    assert model.kv_bytes_per_token == 28 * 4 * 256 * 2
    assert model.weight_bytes == QWEN_7B_BYTES and model.layers_on_gpu == 28
    assert model.compute_bytes == 512 * 4 * (152064 + 4096 * 28)
    half = seven_b(layers=14)
    assert half.weight_bytes == QWEN_7B_BYTES // 2
    assert half.kv_bytes_per_token == model.kv_bytes_per_token // 2
    # Gemma 3 names its head sizes (256), wider than its width over its heads.
    gemma = header("gemma3", 18, 640, 4, 1, attention__key_length=256, attention__value_length=256)
    assert gemma.kv_elements_per_token() == 18 * 1 * 512
    # Without the layers or the heads there is nothing to size from.
    bare = GGUFHeader(3, 0, {"general.architecture": "qwen2"})
    assert bare.kv_elements_per_token() is None
    assert model_memory(bare, QWEN_7B_BYTES, -1, 512, 4096) is None


def test_per_layer_head_counts_are_added_up():
    varied = header("openelm", 3, 1280, 20, 0)
    varied.metadata["openelm.attention.head_count_kv"] = [3, 4, 5]
    varied.metadata["openelm.attention.head_count"] = [12, 16, 20]
    # The head size is the width over the first layer's heads: 1280 / 12 = 106.
    assert varied.kv_elements_per_token() == (3 + 4 + 5) * 2 * 106


@pytest.mark.parametrize("total_gb", [8, 24, 80])
def test_the_most_that_fits_within_the_share_of_free_memory(total_gb):
    device, model = gpu(total_gb), seven_b()
    sizing = size_engine(device, model, DEFAULTS, set(), 0.8, FLOOR)
    size = sizing.size
    assert sizing.sized and sizing.fits
    budget = int(0.8 * device.free_bytes)
    assert sizing.budget_bytes == budget
    assert sizing.planned_bytes == planned(device, model, size) <= budget
    assert size.n_ctx == 4096  # not lowered: a document fits at the size asked for
    assert 1 <= size.parallel <= size.kv_slots
    if size.kv_slots < MOST_KV_SLOTS:  # not capped: one more document would not fit
        more = dataclasses.replace(size, kv_slots=size.kv_slots + 1)
        assert planned(device, model, more) > budget
    assert "GPU" in sizing.line() and f"kv_slots {size.kv_slots}" in sizing.line()


def test_a_small_gpu_holds_fewer_documents_and_a_large_one_the_most_chosen():
    small = size_engine(gpu(8), seven_b(), DEFAULTS, set(), 0.8, FLOOR).size
    large = size_engine(gpu(80), seven_b(), DEFAULTS, set(), 0.8, FLOOR).size
    # 8 GB: 6.08 GB is the share, weights, buffers and reserve take 5.77 GB, and a document
    # of 4096 tokens 0.23 GB: one fits, with no spare beside it.
    assert small == EngineSize(parallel=1, kv_slots=1, n_ctx=4096)
    assert large == EngineSize(MOST_PARALLEL, MOST_KV_SLOTS, 4096)
    # 12 GB: 9.3 GB is the share, 3.5 GB left: 14 streams, one of them the spare.
    assert size_engine(gpu(12), seven_b(), DEFAULTS, set(), 0.8, FLOOR).size == EngineSize(
        parallel=6, kv_slots=13, n_ctx=4096
    )
    less = size_engine(gpu(12), seven_b(), DEFAULTS, set(), 0.6, FLOOR).size
    assert less.kv_slots < 13


def test_a_model_that_does_not_fit_keeps_the_settings_and_says_how_many_layers_would():
    device = gpu(24, name="RTX 4090")
    model = model_memory(QWEN_32B, QWEN_32B_BYTES, -1, 512, 4096)
    assert model is not None
    sizing = size_engine(device, model, DEFAULTS, set(), 0.8, FLOOR)
    assert not sizing.sized and sizing.fits is False
    assert sizing.size == DEFAULTS
    assert sizing.planned_bytes is not None and sizing.planned_bytes > 0.8 * device.free_bytes
    assert "does not fit" in sizing.reason and "RTX" not in sizing.reason
    layers = int(sizing.reason.split("--n-gpu-layers ")[1].split(")")[0])
    assert 0 < layers < 64
    # With that many layers offloaded, it fits.
    fewer = model_memory(QWEN_32B, QWEN_32B_BYTES, layers, 512, 4096)
    assert fewer is not None
    assert size_engine(device, fewer, DEFAULTS, set(), 0.8, FLOOR).fits


def test_n_ctx_is_lowered_only_when_not_one_document_fits():
    model = seven_b()
    fixed = model.weight_bytes + model.compute_bytes + DEVICE_RESERVE_BYTES
    one_at_4096 = 4096 * model.kv_bytes_per_token
    # Room for three quarters of one 4096-token document: one of 2048 tokens fits.
    free = int((fixed + one_at_4096 * 3 // 4) / 0.8) + 1
    device = DeviceMemory(free + GIB, free, ("GPU",), "llama.cpp")
    sizing = size_engine(device, model, DEFAULTS, set(), 0.8, FLOOR)
    assert sizing.size == EngineSize(parallel=1, kv_slots=1, n_ctx=2048)
    assert "lowered from 4096" in sizing.reason and "llama.cpp" in sizing.reason
    # Never under the floor the prompts need.
    tight = DeviceMemory(free, int((fixed + one_at_4096 // 3) / 0.8), ("GPU",), "NVML")
    assert size_engine(tight, model, DEFAULTS, set(), 0.8, FLOOR).fits is False


def test_settings_given_explicitly_win():
    big, model = gpu(80), seven_b()
    chosen = size_engine(big, model, DEFAULTS, {"parallel"}, 0.8, FLOOR)
    assert chosen.size.parallel == 4 and chosen.size.kv_slots == MOST_KV_SLOTS
    assert chosen.explicit == ("parallel",) and "parallel as set" in chosen.reason
    many = dataclasses.replace(DEFAULTS, kv_slots=64)
    assert size_engine(big, model, many, {"kv_slots"}, 0.8, FLOOR).size.kv_slots == 64
    # A long context given on a small GPU is kept: fewer documents fit.
    long = dataclasses.replace(DEFAULTS, n_ctx=16384)
    small = size_engine(gpu(12), model, long, {"n_ctx"}, 0.8, FLOOR)
    assert small.size.n_ctx == 16384 and small.fits and small.size.kv_slots < 8
    assert small.planned_bytes is not None and small.planned_bytes <= 0.8 * gpu(12).free_bytes


def test_all_three_given_are_kept_and_checked():
    every = {"parallel", "kv_slots", "n_ctx"}
    kept = size_engine(gpu(80), seven_b(), DEFAULTS, every, 0.8, FLOOR)
    assert kept.size == DEFAULTS and not kept.sized and kept.fits
    huge = EngineSize(parallel=64, kv_slots=128, n_ctx=32768)
    refused = size_engine(gpu(24), seven_b(), huge, every, 0.8, FLOOR)
    assert refused.size == huge and refused.fits is False and "do NOT fit" in refused.reason


def test_the_spare_stream_for_edits_is_counted():
    model = seven_b()
    fixed = model.weight_bytes + model.compute_bytes + DEVICE_RESERVE_BYTES
    # Room for exactly one 4096-token stream.
    free = int((fixed + 4096 * model.kv_bytes_per_token) / 0.8) + 1
    device = DeviceMemory(free, free, ("GPU",), "NVML")
    assert size_engine(device, model, DEFAULTS, set(), 0.8, FLOOR).size.n_ctx == 4096
    with_spare = size_engine(device, model, DEFAULTS, set(), 0.8, FLOOR, reuse_after_edit=True)
    assert with_spare.size.n_ctx == 2048  # a document and the spare, at half the context
    assert kv_streams(1, 1) == 1 and kv_streams(1, 1, reuse_after_edit=True) == 2
    assert kv_streams(4, 8) == 9 and kv_streams(8, 4) == 9


def test_the_report_says_what_was_chosen_and_from_what():
    sizing = size_engine(gpu(24, name="NVIDIA L4"), seven_b(), DEFAULTS, set(), 0.8, FLOOR)
    report = sizing.as_json()
    assert report["sized"] is True and report["fits"] is True
    assert (report["parallel"], report["kv_slots"], report["n_ctx"]) == (16, 32, 4096)
    assert report["device"]["names"] == ["NVIDIA L4"] and report["device"]["source"] == "NVML"
    assert report["planned_bytes"] <= report["budget_bytes"]
    assert "33 streams of 4096 tokens" in report["reason"]
