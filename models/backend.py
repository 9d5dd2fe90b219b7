"""What llama.cpp was built with: its compute backends (CUDA, Metal, CPU), GPU offload, logs,
and the GPUs it sees with their memory (``gpu_devices``), for sizing the engine at start."""

from __future__ import annotations

import ctypes
import logging
import os
from dataclasses import dataclass

import llama_cpp

log = logging.getLogger("llama.cpp")

_KNOWN_BACKENDS = ("CUDA", "Metal", "Vulkan", "ROCm", "HIP", "SYCL", "OpenCL", "CANN", "MUSA")
# ggml_log_level: 1 debug, 2 info, 3 warn, 4 error, 5 continuation of the previous line.
_LEVELS = {1: logging.DEBUG, 2: logging.DEBUG, 3: logging.WARNING, 4: logging.ERROR}


def system_info() -> str:
    return bool_safe_decode(llama_cpp.llama_print_system_info())


def bool_safe_decode(raw: bytes | str) -> str:
    return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)


def gpu_offload_supported() -> bool:
    return bool(llama_cpp.llama_supports_gpu_offload())


def compiled_backends() -> list[str]:
    """Backends named in llama.cpp's system info or present as backend libraries."""
    found: list[str] = []
    info = system_info()
    for name in _KNOWN_BACKENDS:
        if f"{name} :" in info or f"{name.upper()} :" in info:
            found.append(name)
    lib_dir = os.path.join(os.path.dirname(llama_cpp.__file__), "lib")
    try:
        libs = os.listdir(lib_dir)
    except OSError:
        libs = []
    for name in _KNOWN_BACKENDS:
        if name not in found and any(f"ggml-{name.lower()}" in lib for lib in libs):
            found.append(name)
    return found


def active_backend() -> str:
    """The backend the model runs on: the first GPU backend when offload works, else CPU."""
    if gpu_offload_supported():
        backends = compiled_backends()
        return backends[0] if backends else "GPU"
    return "CPU"


@dataclass(frozen=True)
class DeviceFigures:
    """One GPU as llama.cpp's backend sees it (``ggml_backend_dev_memory``)."""

    name: str
    free_bytes: int
    total_bytes: int


# ggml_backend_dev_type: a GPU with memory of its own (not the CPU, an integrated GPU sharing the
# host's memory, or an accelerator that works beside the CPU).
_GGML_DEVICE_GPU = 1


def gpu_devices() -> list[DeviceFigures]:
    """The GPUs llama.cpp would place the model on, with their free and total memory; empty on
    a build without a GPU backend, or where llama.cpp's device functions cannot be reached."""
    try:
        lib = _device_functions()
        found = []
        for index in range(lib.ggml_backend_dev_count()):
            device = lib.ggml_backend_dev_get(index)
            if lib.ggml_backend_dev_type(device) != _GGML_DEVICE_GPU:
                continue
            free, total = ctypes.c_size_t(), ctypes.c_size_t()
            lib.ggml_backend_dev_memory(device, ctypes.byref(free), ctypes.byref(total))
            name = bool_safe_decode(lib.ggml_backend_dev_description(device) or b"GPU")
            found.append(DeviceFigures(name, int(free.value), int(total.value)))
        return found
    except (AttributeError, OSError, ImportError) as exc:
        log.debug("llama.cpp's device figures are not available: %s", exc)
        return []


def _device_functions() -> ctypes.CDLL:
    """ggml's device functions (in the ggml library llama-cpp-python loads), typed."""
    from llama_cpp._ggml import libggml as lib

    pointer, size = ctypes.c_void_p, ctypes.c_size_t
    lib.ggml_backend_dev_count.restype = size
    lib.ggml_backend_dev_get.argtypes, lib.ggml_backend_dev_get.restype = [size], pointer
    lib.ggml_backend_dev_type.argtypes, lib.ggml_backend_dev_type.restype = [pointer], ctypes.c_int
    lib.ggml_backend_dev_description.argtypes = [pointer]
    lib.ggml_backend_dev_description.restype = ctypes.c_char_p
    lib.ggml_backend_dev_memory.argtypes = [pointer, ctypes.POINTER(size), ctypes.POINTER(size)]
    lib.ggml_backend_dev_memory.restype = None
    return lib


def cpu_threads() -> int:
    """CPUs this process may run on (the default thread count ignores affinity)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


# Kept alive for as long as llama.cpp may call it.
_LOG_CALLBACK = None


def route_llama_logs() -> None:
    """Send llama.cpp's own log lines to Python logging instead of stderr."""
    global _LOG_CALLBACK
    if _LOG_CALLBACK is not None:
        return

    @llama_cpp.llama_log_callback
    def _forward(level: int, text: bytes, _user: ctypes.c_void_p) -> None:
        message = bool_safe_decode(text).rstrip()
        if message:
            log.log(_LEVELS.get(level, logging.DEBUG), "%s", message)

    _LOG_CALLBACK = _forward
    llama_cpp.llama_log_set(_forward, ctypes.c_void_p(0))
