"""The local engine sized to the GPU's memory at start, or the reason it is not.
From the device's figures (NVML, else llama.cpp's), the model's, and the settings given."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping

from daemon.engine.gpu_sizing import (
    SIZED,
    DeviceMemory,
    EngineSize,
    Sizing,
    model_memory,
    size_engine,
    skipped,
)
from daemon.observe.gpu import GpuDevice, gpu_devices
from daemon.settings import Settings
from models.backend import DeviceFigures, gpu_offload_supported
from models.backend import gpu_devices as llama_gpu_devices
from models.loaded import CONTEXT_SPARE_TOKENS
from models.resolve import ResolvedModel

log = logging.getLogger(__name__)


def prompt_floor(settings: Settings) -> int:
    """The least context a request needs: the prompt budget and the longest answer a path
    asks for by default."""
    answer = max(settings.fast_max_tokens, settings.deep_max_tokens, settings.fix_max_tokens)
    return settings.prompt_budget_tokens + answer + CONTEXT_SPARE_TOKENS


# The figures: the device's (NVML, else llama.cpp's), the model's (its GGUF header and file) and
# the settings given explicitly. Sizing runs only where llama.cpp offloads to a GPU and the
# device's memory can be read; anywhere else the settings stay as they are, and the start-up lines
# and ``/health`` say why.
def size_to_gpu(
    settings: Settings,
    resolved: ResolvedModel,
    device: Callable[[], DeviceMemory | None] | None = None,
    offload: Callable[[], bool] = gpu_offload_supported,
) -> tuple[Settings, Sizing]:
    """``settings`` with ``parallel``, ``kv_slots`` and ``n_ctx`` sized to the GPU (those given
    explicitly kept), and what was chosen and why."""
    wanted = EngineSize(settings.parallel, settings.kv_slots, settings.n_ctx)
    explicit = frozenset(SIZED) & settings.model_fields_set
    given = tuple(name for name in SIZED if name in explicit)
    if settings.backend:
        return settings, skipped(wanted, given, "generation runs on the remote backends")
    if not offload():
        return settings, skipped(wanted, given, "no GPU offload in this llama.cpp build")
    if settings.n_gpu_layers == 0:
        return settings, skipped(wanted, given, "n_gpu_layers is 0 (the model stays on the CPU)")
    memory = (device or device_memory)()
    if memory is None:
        return settings, skipped(wanted, given, "the GPU's memory cannot be read (NVML, llama.cpp)")
    model = model_memory(
        resolved.header,
        resolved.path.stat().st_size,
        settings.n_gpu_layers,
        settings.n_batch,
        settings.n_ctx,
    )
    if model is None:
        why = "the model's header does not give its layers, attention heads and vocabulary"
        return settings, skipped(wanted, given, why)
    sizing = size_engine(
        memory,
        model,
        wanted,
        explicit,
        settings.gpu_memory_share,
        prompt_floor(settings),
        settings.reuse_after_edit,
    )
    if sizing.fits is False:
        log.warning("GPU memory: %s", sizing.reason)
    if sizing.sized:
        settings = settings.model_copy(update=sizing.size.as_json())
    return settings, sizing


def device_memory(
    nvml: Callable[[], list[GpuDevice] | None] = gpu_devices,
    llama: Callable[[], list[DeviceFigures]] = llama_gpu_devices,
    env: Mapping[str, str] = os.environ,
) -> DeviceMemory | None:
    """The memory of the GPUs the model goes to, added up: NVML's figures for the devices CUDA
    shows this process, else llama.cpp's own (any GPU backend); None when neither has any."""
    visible = _visible(env.get("CUDA_VISIBLE_DEVICES"))
    devices = [d for d in nvml() or [] if visible is None or d.index in visible]
    if devices:
        return DeviceMemory(
            total_bytes=sum(d.total_bytes for d in devices),
            free_bytes=sum(d.free_bytes for d in devices),
            names=tuple(d.name for d in devices),
            source="NVML",
        )
    figures = llama()
    if not figures:
        return None
    return DeviceMemory(
        total_bytes=sum(f.total_bytes for f in figures),
        free_bytes=sum(f.free_bytes for f in figures),
        names=tuple(f.name for f in figures),
        source="llama.cpp",
    )


def _visible(value: str | None) -> frozenset[int] | None:
    """The NVML indices ``CUDA_VISIBLE_DEVICES`` names; None when unset (all of them), and none
    when it names devices by UUID or MIG instance (NVML's indices do not apply)."""
    if value is None:
        return None
    parts = [p.strip() for p in value.split(",") if p.strip()]
    if all(p.isdigit() for p in parts):
        return frozenset(int(p) for p in parts)
    return frozenset()
