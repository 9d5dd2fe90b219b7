"""How many jobs, documents and tokens of context fit in a GPU's memory.
Pure arithmetic on given figures (``daemon.http.sizing`` reads them at start)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from models.gguf import GGUFHeader

MIB = 2**20
GIB = 2**30
# Bytes of one K or V element: llama.cpp's default KV cache type, f16.
KV_ELEMENT_BYTES = 2
# Room for what the estimate leaves out: the CUDA context, cuBLAS's workspace, allocator slack.
DEVICE_RESERVE_BYTES = 512 * MIB
# The most the daemon chooses by itself on a large GPU (settings given go up to their own limits):
# beyond these a team's workstation gains little, and the cache would only hold idle documents.
MOST_PARALLEL = 16
MOST_KV_SLOTS = 32
# n_ctx is lowered in halves, to a multiple of this (and never under it: the setting's least).
CTX_STEP = 256
SIZED = ("parallel", "kv_slots", "n_ctx")


# The engine is sized from the device's free memory, the model's weights and KV cache, and the
# settings given explicitly. Pure arithmetic on given figures (``daemon.http.sizing`` reads them at
# start). The daemon may use ``share`` of the device's free memory: the model's weights on the GPU,
# llama.cpp's compute buffers (an estimate), a reserve for what is not counted (the CUDA context,
# cuBLAS's workspace), and the KV cache: ``n_ctx`` cells for each of the engine's KV streams (a
# stream per document kept, and one spare). What is left after the weights and buffers is filled
# with streams, up to ``MOST_PARALLEL`` jobs and ``MOST_KV_SLOTS`` documents; ``n_ctx`` is lowered
# (never under the floor the prompts need) only when not even one document fits at the size asked
# for. A setting given explicitly is kept as given.
def kv_streams(parallel: int, kv_slots: int, reuse_after_edit: bool = False) -> int:
    """The KV streams the engine's context holds: one per slot (at least ``parallel``) and a
    spare that slots are exchanged through and edited lines are evaluated in; a lone slot
    without ``reuse_after_edit`` needs no spare."""
    slots = max(kv_slots, parallel)
    return slots + 1 if slots > 1 or reuse_after_edit else 1


@dataclass(frozen=True)
class DeviceMemory:
    """The GPUs the model is placed on, together, and where their figures came from."""

    total_bytes: int
    free_bytes: int
    names: tuple[str, ...]
    source: str  # "NVML" or "llama.cpp"


@dataclass(frozen=True)
class ModelMemory:
    """What the model takes on the GPU, besides the KV cache, and what a token of KV costs."""

    weight_bytes: int  # the weights of the layers offloaded
    kv_bytes_per_token: int  # one token's keys and values in every offloaded layer
    compute_bytes: int  # llama.cpp's compute buffers (an estimate)
    layers_on_gpu: int


def model_memory(
    header: GGUFHeader, file_bytes: int, n_gpu_layers: int, n_batch: int, n_ctx: int
) -> ModelMemory | None:
    """The model's figures from its GGUF header and file size; None when the header does not
    give its layers and attention heads. The weights are the file's bytes (a little more than
    llama.cpp places on the GPU: it keeps the token embeddings in host memory), shared evenly
    by the layers. The compute buffers are estimated as one batch's logits plus its attention
    scores over a context of ``n_ctx`` (llama.cpp's CPU build reserves a little less)."""
    layers = header.block_count
    elements = header.kv_elements_per_token()
    vocabulary = header.vocabulary_size
    heads = header.head_count
    if not layers or not elements or not vocabulary or not heads:
        return None
    on_gpu = layers if n_gpu_layers < 0 else min(layers, n_gpu_layers)
    return ModelMemory(
        weight_bytes=file_bytes * on_gpu // layers,
        kv_bytes_per_token=elements * KV_ELEMENT_BYTES * on_gpu // layers,
        compute_bytes=n_batch * 4 * (vocabulary + n_ctx * heads),
        layers_on_gpu=on_gpu,
    )


@dataclass(frozen=True)
class EngineSize:
    parallel: int
    kv_slots: int
    n_ctx: int

    def as_json(self) -> dict[str, int]:
        return {"parallel": self.parallel, "kv_slots": self.kv_slots, "n_ctx": self.n_ctx}


@dataclass(frozen=True)
class Sizing:
    """What the engine runs with, and why: chosen from the device (``sized``), or the settings
    as they are (sizing skipped, every value given, or a model that does not fit)."""

    size: EngineSize
    sized: bool
    reason: str
    fits: bool | None = None  # None: not checked (no device figures)
    explicit: tuple[str, ...] = ()
    budget_bytes: int | None = None  # share of the free memory
    planned_bytes: int | None = None  # weights, buffers, reserve and KV cache
    device: DeviceMemory | None = None

    def as_json(self) -> dict[str, Any]:
        device = self.device
        return {
            **self.size.as_json(),
            "sized": self.sized,
            "fits": self.fits,
            "explicit": list(self.explicit),
            "budget_bytes": self.budget_bytes,
            "planned_bytes": self.planned_bytes,
            "device": None
            if device is None
            else {
                "names": list(device.names),
                "total_bytes": device.total_bytes,
                "free_bytes": device.free_bytes,
                "source": device.source,
            },
            "reason": self.reason,
        }

    def line(self) -> str:
        """The start-up line."""
        size = self.size
        values = f"parallel {size.parallel}, kv_slots {size.kv_slots}, n_ctx {size.n_ctx}"
        if self.sized:
            return f"{values} sized to the GPU: {self.reason}"
        return f"{values} as set; {self.reason}"


def skipped(size: EngineSize, explicit: tuple[str, ...], why: str) -> Sizing:
    """The settings as they are, and why they were not sized to a GPU."""
    return Sizing(size, sized=False, reason=f"sizing skipped: {why}", explicit=explicit)


def gib(size: float) -> str:
    return f"{size / GIB:.1f} GiB"


@dataclass(frozen=True)
class _Room:
    """The figures every choice is weighed against."""

    device: DeviceMemory
    model: ModelMemory
    share: float
    reuse_after_edit: bool

    @property
    def budget(self) -> int:
        return int(self.share * min(self.device.free_bytes, self.device.total_bytes))

    @property
    def fixed(self) -> int:
        return self.model.weight_bytes + self.model.compute_bytes + DEVICE_RESERVE_BYTES

    def kv_bytes(self, size: EngineSize) -> int:
        streams = kv_streams(size.parallel, size.kv_slots, self.reuse_after_edit)
        return streams * size.n_ctx * self.model.kv_bytes_per_token

    def planned(self, size: EngineSize) -> int:
        return self.fixed + self.kv_bytes(size)

    def sizing(
        self,
        size: EngineSize,
        reason: str,
        given: tuple[str, ...],
        fits: bool,
        sized: bool = False,
        planned: int | None = None,
    ) -> Sizing:
        """The report of ``size`` weighed against this room."""
        return Sizing(
            size,
            sized=sized,
            reason=reason,
            fits=fits,
            explicit=given,
            budget_bytes=self.budget,
            planned_bytes=self.planned(size) if planned is None else planned,
            device=self.device,
        )

    def most_slots(self, n_ctx: int) -> int:
        """The most documents whose streams (and the spare) fit at ``n_ctx``."""
        streams = (self.budget - self.fixed) // max(1, n_ctx * self.model.kv_bytes_per_token)
        if streams >= 2:
            return int(streams) - 1
        return 1 if streams == 1 and not self.reuse_after_edit else 0


def size_engine(
    device: DeviceMemory,
    model: ModelMemory,
    wanted: EngineSize,
    explicit: frozenset[str] | set[str],
    share: float,
    n_ctx_floor: int,
    reuse_after_edit: bool = False,
) -> Sizing:
    """``parallel``, ``kv_slots`` and ``n_ctx`` for this device and model within ``share`` of
    its free memory; ``wanted`` holds the settings (those named in ``explicit`` were given and
    are kept). A model that does not fit keeps the settings, and the reason says what to do."""
    given = tuple(name for name in SIZED if name in explicit)
    room = _Room(device, model, share, reuse_after_edit)
    if len(given) == len(SIZED):
        return _as_given(room, wanted, given)
    floor = min(wanted.n_ctx, max(CTX_STEP, n_ctx_floor))
    contexts = [wanted.n_ctx] if "n_ctx" in given else _halvings(wanted.n_ctx, floor)
    for n_ctx in contexts:
        size = _most_that_fits(room, wanted, given, n_ctx)
        if size is not None:
            return room.sizing(size, _why(room, size, wanted, given), given, fits=True, sized=True)
    return _does_not_fit(room, wanted, given, contexts[-1])


def _halvings(n_ctx: int, floor: int) -> list[int]:
    """``n_ctx``, then halved (to a multiple of CTX_STEP) down to ``floor``."""
    found = [n_ctx]
    while found[-1] > floor:
        found.append(max(floor, found[-1] // 2 // CTX_STEP * CTX_STEP))
    return found


def _most_that_fits(
    room: _Room, wanted: EngineSize, given: tuple[str, ...], n_ctx: int
) -> EngineSize | None:
    """The most jobs and documents that fit at ``n_ctx``, the given values kept; None when the
    given values (or a single document) do not fit."""
    most = room.most_slots(n_ctx)
    if "kv_slots" in given:
        slots = wanted.kv_slots
    elif "parallel" in given:
        slots = min(max(MOST_KV_SLOTS, wanted.parallel), most)
    else:
        slots = min(MOST_KV_SLOTS, most)
    parallel = wanted.parallel if "parallel" in given else min(MOST_PARALLEL, max(1, slots // 2))
    if slots < 1 or max(slots, parallel) > most:
        return None
    return EngineSize(parallel, slots, n_ctx)


def _why(room: _Room, size: EngineSize, wanted: EngineSize, given: tuple[str, ...]) -> str:
    model, device = room.model, room.device
    streams = kv_streams(size.parallel, size.kv_slots, room.reuse_after_edit)
    notes = [f"{', '.join(given)} as set"] if given else []
    if size.n_ctx < wanted.n_ctx:
        notes.append(f"n_ctx lowered from {wanted.n_ctx} to fit")
    if size.kv_slots == MOST_KV_SLOTS and "kv_slots" not in given:
        notes.append(f"{MOST_KV_SLOTS} documents is the most chosen without a setting")
    return (
        f"KV cache {gib(room.kv_bytes(size))} ({streams} streams of {size.n_ctx} tokens, "
        f"{model.kv_bytes_per_token // 1024} KiB a token) + weights {gib(model.weight_bytes)} + "
        f"buffers {gib(model.compute_bytes + DEVICE_RESERVE_BYTES)} = "
        f"{gib(room.planned(size))} of {gib(room.budget)} "
        f"({room.share:g} of {gib(device.free_bytes)} free on {', '.join(device.names)}, "
        f"{device.source})" + "".join(f"; {note}" for note in notes)
    )


def _as_given(room: _Room, wanted: EngineSize, given: tuple[str, ...]) -> Sizing:
    """Every value given: kept, and checked against the device."""
    planned = room.planned(wanted)
    fits = planned <= room.budget
    verdict = "fit" if fits else "do NOT fit"
    reason = (
        f"all three given; they {verdict} in {room.share:g} of the GPU's free memory "
        f"({gib(planned)} of {gib(room.budget)})"
    )
    return room.sizing(wanted, reason, given, fits=fits)


def _does_not_fit(room: _Room, wanted: EngineSize, given: tuple[str, ...], n_ctx: int) -> Sizing:
    """The settings kept, and what would make the model fit: fewer layers on the GPU."""
    model = room.model
    smallest = EngineSize(
        wanted.parallel if "parallel" in given else 1,
        wanted.kv_slots if "kv_slots" in given else 1,
        n_ctx,
    )
    needed = room.planned(smallest)
    per_layer = max(1, (model.weight_bytes + room.kv_bytes(smallest)) // model.layers_on_gpu)
    spare = room.budget - model.compute_bytes - DEVICE_RESERVE_BYTES
    layers = max(0, min(model.layers_on_gpu - 1, spare // per_layer))
    reason = (
        f"the model does not fit: its weights on the GPU ({gib(model.weight_bytes)}), "
        f"buffers ({gib(model.compute_bytes + DEVICE_RESERVE_BYTES)}) and the smallest KV cache "
        f"({gib(room.kv_bytes(smallest))}) need {gib(needed)}, more than {room.share:g} of the "
        f"GPU's free memory ({gib(room.budget)}); offload fewer layers (--n-gpu-layers "
        f"{layers}), lower the settings given, or choose a smaller model"
    )
    return room.sizing(wanted, reason, given, fits=False, planned=needed)
