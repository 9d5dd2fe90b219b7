"""The GPU at start and in /metrics: its figures from NVML (a fake NVML module is the seam) or
llama.cpp, the engine's settings sized from them, and the gauges of each GPU."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from daemon.engine.gpu_sizing import MOST_KV_SLOTS, MOST_PARALLEL, DeviceMemory
from daemon.http.sizing import device_memory, prompt_floor, size_to_gpu
from daemon.observe.gpu import gpu_devices, gpu_figures
from daemon.observe.gpu_metrics import GpuCollector
from daemon.settings import SettingsError, load_settings
from models.backend import DeviceFigures
from models.backend import gpu_devices as llama_gpu_devices
from models.resolve import ResolvedModel
from tests.unit.test_gpu_sizing import QWEN_7B, QWEN_7B_BYTES, gpu

GIB = 2**30


class FakeNvml:
    """pynvml's calls that assist makes, answering for the GPUs given."""

    def __init__(self, *gpus: tuple[str, int, int, int]) -> None:
        self.gpus = gpus  # name, total bytes, used bytes, utilisation percent

    def nvmlDeviceGetCount(self) -> int:
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        return index

    def nvmlDeviceGetMemoryInfo(self, handle: int) -> SimpleNamespace:
        _, total, used, _ = self.gpus[handle]
        return SimpleNamespace(total=total, used=used, free=total - used)

    def nvmlDeviceGetUtilizationRates(self, handle: int) -> SimpleNamespace:
        return SimpleNamespace(gpu=self.gpus[handle][3], memory=0)

    def nvmlDeviceGetName(self, handle: int) -> bytes:
        return self.gpus[handle][0].encode()


class BrokenNvml(FakeNvml):
    def nvmlDeviceGetMemoryInfo(self, handle: int) -> SimpleNamespace:
        raise RuntimeError("NVML_ERROR_GPU_IS_LOST")


TWO = FakeNvml(("NVIDIA H100 80GB HBM3", 80 * GIB, 2 * GIB, 35), ("NVIDIA L4", 24 * GIB, 0, 0))


def test_nvml_figures_of_each_gpu():
    devices = gpu_devices(TWO)
    assert devices is not None
    assert [d.name for d in devices] == ["NVIDIA H100 80GB HBM3", "NVIDIA L4"]
    assert devices[0].free_bytes == 78 * GIB and devices[0].utilization_percent == 35
    assert gpu_figures(TWO) == [
        {
            "index": 0,
            "name": "NVIDIA H100 80GB HBM3",
            "memory_used_mb": 2048,
            "memory_total_mb": 81920,
            "utilization_percent": 35,
        },
        {
            "index": 1,
            "name": "NVIDIA L4",
            "memory_used_mb": 0,
            "memory_total_mb": 24576,
            "utilization_percent": 0,
        },
    ]
    assert gpu_devices(BrokenNvml(("lost", GIB, 0, 0))) is None
    assert gpu_devices(FakeNvml()) is None


def test_the_devices_cuda_shows_are_added_up_and_llama_cpp_answers_without_nvml():
    nvml = lambda: gpu_devices(TWO)  # noqa: E731
    llama = lambda: [DeviceFigures("Radeon RX 7900 XTX", 20 * GIB, 24 * GIB)]  # noqa: E731
    both = device_memory(nvml, llama, env={})
    assert both == DeviceMemory(
        104 * GIB, 102 * GIB, ("NVIDIA H100 80GB HBM3", "NVIDIA L4"), "NVML"
    )
    second = device_memory(nvml, llama, env={"CUDA_VISIBLE_DEVICES": "1"})
    assert second is not None and second.names == ("NVIDIA L4",)
    # Devices named by UUID: NVML's indices say nothing of them, llama.cpp's figures do.
    by_uuid = device_memory(nvml, llama, env={"CUDA_VISIBLE_DEVICES": "GPU-8d1e6c2a"})
    assert by_uuid == DeviceMemory(24 * GIB, 20 * GIB, ("Radeon RX 7900 XTX",), "llama.cpp")
    assert device_memory(lambda: None, llama, env={}) == by_uuid
    assert device_memory(lambda: None, lambda: [], env={}) is None


def test_this_machines_llama_cpp_reports_no_gpu():
    """The CPU build here: llama.cpp's device list holds its CPU, which is not a GPU."""
    assert llama_gpu_devices() == []


def model_file(tmp_path: Path) -> ResolvedModel:
    path = tmp_path / "qwen2.5-coder-7b-q4_k_m.gguf"
    with path.open("wb") as handle:
        handle.truncate(QWEN_7B_BYTES)  # sparse: the size of the file is what counts
    return ResolvedModel(path, "configured", QWEN_7B)


def test_the_settings_are_sized_on_a_gpu_and_those_given_are_kept(tmp_path):
    resolved = model_file(tmp_path)
    sized, sizing = size_to_gpu(load_settings(), resolved, lambda: gpu(80), lambda: True)
    assert sizing.sized and sizing.fits
    assert (sized.parallel, sized.kv_slots, sized.n_ctx) == (MOST_PARALLEL, MOST_KV_SLOTS, 4096)
    given = load_settings(parallel=2, n_ctx=8192)
    kept, sizing = size_to_gpu(given, resolved, lambda: gpu(80), lambda: True)
    assert (kept.parallel, kept.n_ctx) == (2, 8192) and kept.kv_slots == MOST_KV_SLOTS
    assert sizing.explicit == ("parallel", "n_ctx")
    # A default is not a setting given, even when the value is the same.
    assert load_settings().model_fields_set.isdisjoint({"parallel", "kv_slots", "n_ctx"})


def test_a_setting_from_the_environment_is_given_too(tmp_path, monkeypatch):
    monkeypatch.setenv("ASSIST_KV_SLOTS", "3")
    sized, sizing = size_to_gpu(
        load_settings(), model_file(tmp_path), lambda: gpu(80), lambda: True
    )
    assert sized.kv_slots == 3 and sized.parallel == 1 and sizing.explicit == ("kv_slots",)


def test_sizing_is_skipped_and_says_why(tmp_path):
    resolved = model_file(tmp_path)
    settings = load_settings()
    cases = [
        (settings, lambda: gpu(80), lambda: False, "no GPU offload in this llama.cpp build"),
        (settings, lambda: None, lambda: True, "the GPU's memory cannot be read"),
        (load_settings(n_gpu_layers=0), lambda: gpu(80), lambda: True, "n_gpu_layers is 0"),
        (
            load_settings(backend=["http://gpu1:8080"]),
            lambda: gpu(80),
            lambda: True,
            "generation runs on the remote backends",
        ),
    ]
    for given, device, offload, why in cases:
        kept, sizing = size_to_gpu(given, resolved, device, offload)
        assert kept is given and not sizing.sized and sizing.fits is None
        assert why in sizing.reason and "as set; sizing skipped" in sizing.line()


def test_the_share_is_a_setting_between_0_and_1():
    assert load_settings().gpu_memory_share == 0.8
    assert load_settings(gpu_memory_share=0.5).gpu_memory_share == 0.5
    for bad in (0, 1.5):
        with pytest.raises(SettingsError, match="gpu_memory_share"):
            load_settings(gpu_memory_share=bad)
    assert prompt_floor(load_settings()) == 1536 + 256 + 8


def registry_of(devices) -> CollectorRegistry:
    registry = CollectorRegistry()
    registry.register(GpuCollector(devices))
    return registry


def scrape(devices) -> str:
    return generate_latest(registry_of(devices)).decode()


def test_metrics_show_each_gpus_memory_and_utilisation():
    registry = registry_of(lambda: gpu_devices(TWO))
    h100 = {"gpu": "0", "name": "NVIDIA H100 80GB HBM3"}
    l4 = {"gpu": "1", "name": "NVIDIA L4"}
    assert registry.get_sample_value("assist_gpu_memory_used_bytes", h100) == 2 * GIB
    assert registry.get_sample_value("assist_gpu_memory_free_bytes", h100) == 78 * GIB
    assert registry.get_sample_value("assist_gpu_memory_total_bytes", l4) == 24 * GIB
    assert registry.get_sample_value("assist_gpu_utilization_ratio", h100) == 0.35
    assert "# TYPE assist_gpu_memory_used_bytes gauge" in scrape(lambda: gpu_devices(TWO))


@pytest.mark.parametrize("devices", [lambda: None, lambda: [], lambda: gpu_devices(BrokenNvml())])
def test_without_a_gpu_the_gauges_are_left_out(devices):
    text = scrape(devices)
    assert "assist_gpu" not in text and "NaN" not in text
