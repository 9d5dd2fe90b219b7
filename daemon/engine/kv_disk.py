"""Saved KV states on disk, so a restart does not evaluate every document again: a bounded folder.
Below the host-memory states; several daemons may share the folder."""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import llama_cpp
import numpy as np

from daemon.engine.kv_files import (
    HEADER_SIZE,
    SUFFIX,
    BadStateFile,
    ForeignStateFile,
    StateOwner,
    read_head,
    read_state_file,
    write_state_file,
)
from daemon.engine.prefix import begins_with, longest_shared
from models.loaded import LoadedModel

log = logging.getLogger(__name__)

# States waiting for the writer hold host memory: beyond this, an evicted state is not written.
PENDING_BYTES = 256 * 1024 * 1024
# A temporary file this old is what a crashed writer left behind (a live one is being written).
STALE_TEMPORARY_S = 3600.0
# The folder is read again when it changed, or after this long (for coarse file times).
RESCAN_S = 10.0


# The context's parameters that llama.cpp's sequence state data depends on: the cells and streams
# (a state holds one count per stream), the KV types, flash attention (V transposed or not), and
# RoPE (K is stored rotated).
_LAYOUT_FIELDS = (
    "n_ctx",
    "n_seq_max",
    "kv_unified",
    "type_k",
    "type_v",
    "flash_attn_type",
    "swa_full",
    "rope_scaling_type",
    "rope_freq_base",
    "rope_freq_scale",
    "yarn_ext_factor",
    "yarn_attn_factor",
    "yarn_beta_fast",
    "yarn_beta_slow",
    "yarn_orig_ctx",
)


def state_owner(model: LoadedModel) -> StateOwner:
    """Whose states ``model``'s context can load: its weights, ``n_ctx``, its context's layout
    and the llama.cpp build (an upgrade of llama-cpp-python starts the states afresh)."""
    params = model.llm.context_params
    fields = [f"{name}={getattr(params, name)}" for name in _LAYOUT_FIELDS]
    layout = ";".join([f"llama-cpp-python={llama_cpp.__version__}", *fields])
    return StateOwner(model.facts.fingerprint, model.facts.n_ctx, layout)


@dataclass
class DiskEntry:
    """One state file of this model and context, or one waiting to be written."""

    name: str
    tokens: np.ndarray
    size: int  # the file's bytes
    pending: bytes | None = None  # the KV data, until the writer has written it


@dataclass
class DiskStats:
    written: int = 0
    rejected: int = 0  # corrupt or foreign files removed when read back
    removed: int = 0  # files removed to keep the folder within its bound
    failed: int = 0  # writes that failed (a full disk, a read-only folder)


# Below the host-memory states (``daemon.engine.kv_states``): a state evicted from host memory, and
# at a clean shutdown every state and every document held in the KV cache, is written to one file
# of ``daemon.engine.kv_files`` in the folder (by a writer thread of its own, so the engine never
# waits for the disk). An index of the folder's files of this model and context (their tokens, read
# at start without the KV data, and again whenever the folder changes) lets a prompt find the state
# sharing the longest prefix with it on disk as in memory. Restoring one reads the file back and
# checks its header and checksum first; a corrupt file, or one that turns out to be another
# model's, is logged, removed and never loaded, and the prompt is evaluated as usual.
#
# Several daemons may share the folder (a workstation, or two models side by side): files appear
# only whole (renamed into place), a file another daemon removed is simply gone from the index, and
# the folder is bounded as a whole (``max_bytes``): the files used least recently (their
# modification time, refreshed on every use by any daemon) are removed first, whoever wrote them.
# Files of another model or context (``n_ctx``, KV layout) are never loaded, nor removed when the
# folder is read: they belong to a daemon that may share the folder, and age out under the bound.
class DiskStates:
    """The folder's states of ``owner``: found, written, read back and kept within bounds.
    ``best`` may be called from any thread; the rest from the engine's worker thread (and at
    shutdown, after it stopped)."""

    def __init__(self, folder: Path, owner: StateOwner, max_bytes: int) -> None:
        self.folder = folder
        self.owner = owner
        self.max_bytes = max_bytes
        self.stats = DiskStats()
        self._entries: dict[str, DiskEntry] = {}
        self._foreign: set[str] = set()  # files of another owner or format version
        self._lock = threading.Lock()
        self._queue: queue.Queue[DiskEntry | None] = queue.Queue()
        self._pending_bytes = 0
        self._writer: threading.Thread | None = None
        self._seen: tuple[int, float] | None = None  # the folder's mtime at the last scan, and when
        self.usable = True
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            log.warning("saved KV states stay in memory: cannot create %s (%s)", folder, exc)
            self.usable = False
            return
        self._remove_stale_temporaries()
        self.refresh()
        self._enforce_bound()

    # -- the index ---------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._entries)

    @property
    def stored_bytes(self) -> int:
        """The bytes of this owner's files (and of those waiting to be written)."""
        with self._lock:
            return sum(entry.size for entry in self._entries.values())

    def best(self, tokens: np.ndarray) -> tuple[str | None, int]:
        """The file sharing the longest prefix with ``tokens``, and that length."""
        with self._lock:
            entries = [(entry.name, entry.tokens) for entry in self._entries.values()]
        return longest_shared(entries, tokens)

    def refresh(self) -> None:
        """Read the folder again when it changed (another daemon wrote or removed a file):
        new files of this owner join the index, files gone leave it."""
        if not self.usable:
            return
        try:
            mtime = os.stat(self.folder).st_mtime_ns
        except OSError:
            return
        now = time.monotonic()
        if self._seen is not None and self._seen[0] == mtime and now - self._seen[1] < RESCAN_S:
            return
        self._seen = (mtime, now)
        try:
            names = {e.name for e in os.scandir(self.folder) if e.name.endswith(SUFFIX)}
        except OSError:
            return
        with self._lock:
            for name in [n for n, e in self._entries.items() if e.pending is None]:
                if name not in names:
                    del self._entries[name]
            self._foreign &= names
            new = names - self._entries.keys() - self._foreign
        for name in new:
            self._index(name)

    def _index(self, name: str) -> None:
        path = self.folder / name
        try:
            head = read_head(path)
        except FileNotFoundError:
            return
        except ForeignStateFile:
            head = None
        except (BadStateFile, OSError) as exc:
            # Files appear only whole: one that does not read is damaged, never half-written.
            log.warning("removing a damaged saved KV state %s (%s)", path, exc)
            path.unlink(missing_ok=True)
            return
        with self._lock:
            if head is None or not head.belongs_to(self.owner):
                self._foreign.add(name)
            else:
                self._entries.setdefault(name, DiskEntry(name, head.tokens, head.file_size))

    # -- writing -------------------------------------------------------------------------------
    def put(self, tokens: np.ndarray, data: bytes, *, wait: bool = False) -> bool:
        """Have a state written (by the writer thread). A state whose tokens a file already
        holds, or begin one, only makes that file recently used. Beyond ``PENDING_BYTES``
        waiting, the state is left out, unless ``wait`` (at shutdown). False when not written."""
        size = HEADER_SIZE + len(tokens) * 4 + len(data)
        if not self.usable or size > self.max_bytes:
            return False
        name = self.owner.file_name(tokens)
        with self._lock:
            covering = self._entries.get(name) or next(
                (e for e in self._entries.values() if begins_with(e.tokens, tokens)),
                None,
            )
            if covering is None and not wait and self._pending_bytes + len(data) > PENDING_BYTES:
                return False
            if covering is None:
                entry = DiskEntry(name, tokens, size, pending=data)
                self._entries[name] = entry
                self._pending_bytes += len(data)
        if covering is not None:
            if covering.pending is None:
                self._touch(covering.name)
            return True
        if self._writer is None:
            self._writer = threading.Thread(target=self._write_all, name="assist-kv-disk")
            self._writer.daemon = True
            self._writer.start()
        self._queue.put(entry)
        return True

    def _write_all(self) -> None:
        while (entry := self._queue.get()) is not None:
            try:
                self._write(entry)
            except Exception:  # the writer must survive anything one file does
                log.exception("writing a saved KV state failed")
            finally:
                self._queue.task_done()
        self._queue.task_done()

    def _write(self, entry: DiskEntry) -> None:
        data = entry.pending
        assert data is not None
        try:
            write_state_file(self.folder, self.owner, entry.tokens, data)
        except OSError as exc:
            log.warning("a saved KV state stays in memory only: writing it failed (%s)", exc)
            with self._lock:
                self._entries.pop(entry.name, None)
                self._pending_bytes -= len(data)
                self.stats.failed += 1
            return
        with self._lock:
            entry.pending = None
            self._pending_bytes -= len(data)
            self.stats.written += 1
            # States that are a prefix of this one are redundant now.
            redundant = [
                e.name
                for e in self._entries.values()
                if e.pending is None
                and len(e.tokens) < len(entry.tokens)
                and begins_with(entry.tokens, e.tokens)
            ]
        for name in redundant:
            self._remove(name)
        self._enforce_bound()

    def flush(self) -> None:
        """Wait until every state handed over is written."""
        if self._writer is not None:
            self._queue.join()

    def close(self) -> None:
        """Write what waits, then stop the writer."""
        if self._writer is not None:
            self._queue.put(None)
            self._writer.join()
            self._writer = None

    # -- reading back ----------------------------------------------------------------------
    def load(self, name: str) -> tuple[np.ndarray, bytearray] | None:
        """A state's tokens and KV data, checked; None when the file is gone, or was corrupt
        or another model's (it is then removed)."""
        with self._lock:
            entry = self._entries.get(name)
        if entry is None:
            return None
        pending = entry.pending
        if pending is not None:
            return entry.tokens, bytearray(pending)
        path = self.folder / name
        try:
            loaded = read_state_file(path, self.owner)
        except FileNotFoundError:
            with self._lock:
                self._entries.pop(name, None)
            return None
        except (BadStateFile, ForeignStateFile) as exc:
            self.reject(name, str(exc))
            return None
        except OSError as exc:
            log.warning("cannot read the saved KV state %s (%s)", path, exc)
            return None
        self._touch(name)
        return loaded

    def reject(self, name: str, why: str) -> None:
        """Remove a file that must not be loaded (corrupt, another model's, or refused by
        llama.cpp), saying why."""
        log.warning(
            "removed the saved KV state %s (%s); the prompt is evaluated instead",
            self.folder / name,
            why,
        )
        self._remove(name)
        self.stats.rejected += 1

    # -- the folder ------------------------------------------------------------------------
    def _touch(self, name: str) -> None:
        """Make a file the most recently used (for every daemon sharing the folder)."""
        try:
            os.utime(self.folder / name)
        except FileNotFoundError:
            with self._lock:
                self._entries.pop(name, None)
        except OSError:
            pass

    def _remove(self, name: str) -> None:
        with self._lock:
            self._entries.pop(name, None)
            self._foreign.discard(name)
        try:
            (self.folder / name).unlink(missing_ok=True)
        except OSError as exc:
            log.warning("cannot remove %s (%s)", self.folder / name, exc)

    def _enforce_bound(self) -> None:
        """Remove the least recently used files (of any owner) until the folder fits."""
        files = []
        try:
            for item in os.scandir(self.folder):
                if item.name.endswith(SUFFIX):
                    try:
                        stat = item.stat()
                    except FileNotFoundError:
                        continue
                    files.append((stat.st_mtime_ns, item.name, stat.st_size))
        except OSError:
            return
        total = sum(size for _, _, size in files)
        for _, name, size in sorted(files):
            if total <= self.max_bytes:
                break
            self._remove(name)
            self.stats.removed += 1
            total -= size

    def _remove_stale_temporaries(self) -> None:
        """Remove what a writer that crashed left behind (never a file being written now)."""
        limit = time.time() - STALE_TEMPORARY_S
        try:
            for item in os.scandir(self.folder):
                if item.name.startswith(".") and item.name.endswith(".tmp"):
                    try:
                        if item.stat().st_mtime < limit:
                            os.unlink(item.path)
                    except OSError:
                        continue
        except OSError:
            return
