"""GPU figures from NVML (nvidia-ml-py), when there is an NVIDIA GPU; None otherwise."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

_lock = threading.Lock()
_state: dict[str, Any] = {"tried": False, "nvml": None}


def _nvml() -> Any:
    with _lock:
        if not _state["tried"]:
            _state["tried"] = True
            try:
                import pynvml

                pynvml.nvmlInit()
                _state["nvml"] = pynvml
            except Exception as exc:  # no library, no driver, no device: all mean "CPU"
                log.debug("NVML unavailable: %s", exc)
        return _state["nvml"]


@dataclass(frozen=True)
class GpuDevice:
    """One GPU as NVML reports it at the moment of asking."""

    index: int
    name: str
    total_bytes: int
    free_bytes: int
    used_bytes: int
    utilization_percent: int


def gpu_devices(nvml: Any = None) -> list[GpuDevice] | None:
    """Each GPU's memory and utilisation, or None when NVML finds none (``nvml``: the NVML
    module to ask, pynvml's by default)."""
    nvml = nvml if nvml is not None else _nvml()
    if nvml is None:
        return None
    try:
        found = []
        for index in range(nvml.nvmlDeviceGetCount()):
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
            memory = nvml.nvmlDeviceGetMemoryInfo(handle)
            usage = nvml.nvmlDeviceGetUtilizationRates(handle)
            name = nvml.nvmlDeviceGetName(handle)
            found.append(
                GpuDevice(
                    index=index,
                    name=name.decode() if isinstance(name, bytes) else str(name),
                    total_bytes=int(memory.total),
                    free_bytes=int(memory.free),
                    used_bytes=int(memory.used),
                    utilization_percent=int(usage.gpu),
                )
            )
        return found or None
    except Exception as exc:
        log.debug("NVML query failed: %s", exc)
        return None


def gpu_figures(nvml: Any = None) -> list[dict[str, Any]] | None:
    """Name, memory and utilisation of each GPU, or None when NVML finds none."""
    devices = gpu_devices(nvml)
    if devices is None:
        return None
    return [
        {
            "index": device.index,
            "name": device.name,
            "memory_used_mb": round(device.used_bytes / 2**20),
            "memory_total_mb": round(device.total_bytes / 2**20),
            "utilization_percent": device.utilization_percent,
        }
        for device in devices
    ]
