"""GPU figures from NVML (nvidia-ml-py), when there is an NVIDIA GPU; None otherwise."""

from __future__ import annotations

import logging
import threading
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


def gpu_figures() -> list[dict[str, Any]] | None:
    """Name, memory and utilisation of each GPU, or None when NVML finds none."""
    nvml = _nvml()
    if nvml is None:
        return None
    try:
        count = nvml.nvmlDeviceGetCount()
        found = []
        for index in range(count):
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
            memory = nvml.nvmlDeviceGetMemoryInfo(handle)
            usage = nvml.nvmlDeviceGetUtilizationRates(handle)
            name = nvml.nvmlDeviceGetName(handle)
            found.append(
                {
                    "index": index,
                    "name": name.decode() if isinstance(name, bytes) else str(name),
                    "memory_used_mb": round(memory.used / 2**20),
                    "memory_total_mb": round(memory.total / 2**20),
                    "utilization_percent": int(usage.gpu),
                }
            )
        return found or None
    except Exception as exc:
        log.debug("NVML query failed: %s", exc)
        return None
