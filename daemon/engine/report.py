"""An engine's running counters, and the typed report of itself that ``/health`` shows.
Its figures (local or remote), its queue and its saved KV states."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Literal

EngineKind = Literal["local", "remote"]
# One remote backend's figures, as ``RemoteServer.snapshot`` gives them.
BackendFigures = dict[str, Any]


@dataclass
class EngineStats:
    """The counters an engine keeps while it runs jobs."""

    jobs: int = 0
    cancelled: int = 0
    deadline: int = 0
    errors: int = 0
    yielded: int = 0
    steps: int = 0
    batched_steps: int = 0  # steps that decoded tokens of more than one job
    tokens_generated: int = 0
    tokens_scored: int = 0
    prompt_tokens_evaluated: int = 0
    prompt_tokens_reused: int = 0
    prompt_tokens_moved: int = 0  # reused after an edit above them, at new positions
    last_job_tokens: int = 0
    last_job_reason: str | None = None
    branches: int = 0  # candidates decoded beside a job's own continuation
    duplicate_branches: int = 0  # dropped: they reached the job's own text
    late_branches: int = 0  # dropped: still writing a grace of tokens after the job's own ended

    def count(self, reason: str, tokens: int) -> None:
        """A job ended for ``reason`` with ``tokens`` generated."""
        self.jobs += 1
        self.tokens_generated += tokens
        self.last_job_tokens = tokens
        self.last_job_reason = reason
        if reason == "cancelled":
            self.cancelled += 1
        elif reason == "deadline":
            self.deadline += 1


@dataclass(frozen=True)
class _Figures:
    """An engine's figures as ``/health`` shows them: its kind, then its fields in order."""

    kind: ClassVar[EngineKind]

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, **asdict(self)}


@dataclass(frozen=True)
class LocalFigures(_Figures):
    """The engine that decodes here: its slots, steps, jobs, speed and candidates."""

    kind: ClassVar[EngineKind] = "local"
    busy: int
    running: int
    parallel: int
    kv_slots: int
    steps: int
    batched_steps: int
    prompt_tokens_moved: int
    kv_prefixes_copied: int
    kv_slots_evicted: int
    jobs: int
    cancelled: int
    deadline: int
    errors: int
    tokens_generated: int
    prompt_tokens_evaluated: int
    prompt_tokens_reused: int
    last_job_tokens: int
    last_job_reason: str | None
    prompt_tokens_per_s: float
    tokens_per_s: float
    fork_cost: float | None
    candidates_decoded: bool
    branches: int
    duplicate_branches: int
    late_branches: int


@dataclass(frozen=True)
class RemoteFigures(_Figures):
    """The engine over remote backends: its jobs, speed, and each backend's figures."""

    kind: ClassVar[EngineKind] = "remote"
    busy: int
    running: int
    parallel: int
    jobs: int
    cancelled: int
    deadline: int
    errors: int
    tokens_generated: int
    last_job_tokens: int
    last_job_reason: str | None
    prompt_tokens_per_s: float
    tokens_per_s: float
    backends: list[BackendFigures]


@dataclass(frozen=True)
class QueueFigures:
    """The queue in front of an engine: jobs waiting by priority, requests refused, jobs
    preempted, and jobs that gave way to a more urgent one."""

    queued: Mapping[str, int]
    refused: int
    preempted: int
    yielded: int

    def as_json(self) -> dict[str, int]:
        return {
            **{f"queued_{priority}": count for priority, count in self.queued.items()},
            "refused": self.refused,
            "preempted": self.preempted,
            "yielded": self.yielded,
        }


@dataclass(frozen=True)
class SavedStateFigures:
    """KV states saved to host memory (none on a remote engine): how many, their bytes, how
    often one was restored and the tokens that spared evaluating; and on disk: this model's
    files and their bytes, the restores and tokens that came from them, the files written, and
    those removed on reading back (corrupt, or another model's)."""

    kv_states: int = 0
    kv_state_bytes: int = 0
    kv_restored: int = 0
    kv_tokens_restored: int = 0
    kv_disk_states: int = 0
    kv_disk_bytes: int = 0
    kv_disk_restored: int = 0
    kv_disk_tokens_restored: int = 0
    kv_disk_written: int = 0
    kv_disk_rejected: int = 0

    def as_json(self) -> dict[str, int]:
        return asdict(self)


@dataclass(frozen=True)
class EngineReport:
    """An engine's report: its own figures, its queue's and its saved states'."""

    figures: LocalFigures | RemoteFigures
    queue: QueueFigures
    saved_states: SavedStateFigures
