"""The sequences of the llama.cpp context: which prompt each holds, and which a new job takes."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import llama_cpp
import numpy as np

from daemon.engine.kv_splice import splice
from daemon.engine.kv_states import (
    MIN_GAIN,
    MIN_TOKENS,
    SequenceStates,
    StateKey,
)
from daemon.engine.prefix import common_prefix
from daemon.engine.reuse import ReusePlan, plan_reuse

# Moved chunks are at least this long: shorter ones are cheaper to evaluate than to trust.
MIN_CHUNK = 32


@dataclass
class Slot:
    seq: int
    tokens: list[int] = field(default_factory=list)  # the KV this sequence holds, in order
    busy: bool = False
    used: int = 0  # when it was last claimed (a counter)


@dataclass
class Claim:
    slot: Slot
    plan: ReusePlan
    source: str  # "slot", "copy", "saved" or "cold": where the kept tokens came from


@dataclass
class SlotStats:
    claims: int = 0
    copied: int = 0
    moved_tokens: int = 0
    evicted: int = 0
    swapped: int = 0  # slots exchanged between streams to keep decoded ones consecutive


# The context holds n sequences (slots) and one more: each in a KV stream of its own, with a spare
# stream to swap two slots through, or all in one unified KV cache. After an edit the extra
# sequence is also where the edited lines are evaluated aside (gap_sequence, merge_gap). A slot
# remembers the tokens whose KV it holds; when a job ends its slot keeps them, so the document's
# next request finds its prompt evaluated. A new job takes the free slot that lets it keep the most
# (its common prefix and, after an edit, the unchanged chunks below, moved into place:
# daemon.engine.reuse); when another slot, busy or not, shares a longer prefix, that prefix is
# copied (llama_memory_seq_cp: shared cells in a unified cache; across streams the donor's stream
# is copied and cut); when a saved host-memory state shares more than any slot, it is restored. A
# slot about to be overwritten is saved to host memory first when it is worth coming back to, and
# least recently used free slots are emptied when the cache runs out of room. Used only from the
# worker thread.
class Slots:
    def __init__(
        self,
        ctx: llama_cpp.llama_context_p,
        count: int,
        states: SequenceStates,
        *,
        scratch: bool,
        can_shift: bool,
        max_gap: int,
        shared_cells: bool = True,
        spare: bool = False,
    ) -> None:
        self.ctx = ctx
        self.memory = llama_cpp.llama_get_memory(ctx)
        self.slots = [Slot(seq) for seq in range(count)]
        self.scratch = count if scratch else None
        # A stream of no slot's, to exchange two slots' streams through (streams only).
        self.spare = count if spare and not shared_cells else None
        self.states = states
        self.can_shift = can_shift
        self._gap_limit = max_gap
        # A unified cache: sequences share cells, so a copied prefix is shared metadata. With
        # a stream per sequence, a copy is of the donor's whole stream, then cut.
        self.shared_cells = shared_cells
        self.stats = SlotStats()
        self._clock = itertools.count(1)

    def __len__(self) -> int:
        return len(self.slots)

    @property
    def free(self) -> list[Slot]:
        return [slot for slot in self.slots if not slot.busy]

    def clear(self) -> None:
        llama_cpp.llama_memory_clear(self.memory, True)
        for slot in self.slots:
            slot.tokens = []

    def use_scratch(self) -> None:
        """Evaluate middle gaps aside in the spare stream, joined into the slot afterwards (a
        cache whose sequence states ``daemon.engine.kv_splice`` can join)."""
        if self.spare is not None:
            self.scratch = self.spare

    @property
    def max_gap(self) -> int:
        """The longest middle gap a reuse plan may keep: none without a scratch sequence."""
        return self._gap_limit if self.scratch is not None else 0

    def gap_sequence(self, slot: Slot, start: int) -> int:
        """Prepare the scratch sequence to evaluate a gap of ``slot`` from ``start``: it holds
        the slot's KV before ``start``. Returns its number."""
        scratch = self.scratch
        assert scratch is not None
        self.remove(scratch, -1, -1)
        if self.shared_cells:
            llama_cpp.llama_memory_seq_cp(self.memory, slot.seq, scratch, 0, start)
        else:
            llama_cpp.llama_memory_seq_cp(self.memory, slot.seq, scratch, -1, -1)
            self.remove(scratch, start, -1)
        return scratch

    def merge_gap(self, slot: Slot, start: int, end: int) -> bool:
        """Give ``slot`` the KV of the gap ``[start, end)`` evaluated in the scratch sequence,
        and empty that. False when it could not (the slot then holds nothing)."""
        scratch = self.scratch
        assert scratch is not None
        merged = True
        if self.shared_cells:
            llama_cpp.llama_memory_seq_cp(self.memory, scratch, slot.seq, start, end)
        else:
            merged = splice(self.ctx, scratch, slot.seq, end)
        self.remove(scratch, -1, -1)
        if not merged:
            self.reset(slot)
        return merged

    def remove(self, seq: int, start: int, end: int = -1) -> None:
        llama_cpp.llama_memory_seq_rm(self.memory, seq, start, end)

    def claim(self, wanted: list[int], *, move: bool = True) -> Claim | None:
        """Take the free slot best for ``wanted`` and prepare its KV as the plan says; None
        when every slot is busy. With ``move`` false, only a prefix is kept."""
        free = self.free
        if not free:
            return None
        move = move and self.can_shift
        plans = [(self._plan(slot.tokens, wanted, move), slot) for slot in free]
        # The plan that keeps most; a few shared tokens (a licence header, a BOS) do not
        # justify overwriting another document. Among equals an empty slot, then the least
        # recently used.
        best, slot = max(plans, key=lambda p: (_worth(p[0], p[1]), not p[1].tokens, -p[1].used))
        source = "slot" if best.reused else "cold"
        donor = max(
            (s for s in self.slots if s is not slot and s.tokens),
            key=lambda s: common_prefix(s.tokens, wanted),
            default=None,
        )
        shared = min(common_prefix(donor.tokens, wanted), len(wanted) - 1) if donor else 0
        saved_id: StateKey | None = None
        saved = 0
        probe = np.asarray(wanted, dtype=np.intc)
        if self.states.enabled:
            self.states.refresh()
            saved_id, _ = self.states.best(probe)
        # Saving the slot's state never evicts the one this job may restore, but may drop it
        # when the slot's state covers it: look the best one up again after.
        self._keep_for_later(slot, wanted, best, saved_id)
        if self.states.enabled:
            saved_id, saved = self.states.best(probe)
            saved = min(saved, len(wanted) - 1)
        if saved_id is not None and saved >= max(best.reused, shared) + MIN_GAIN:
            slot.tokens = self.states.restore(self.ctx, slot.seq, saved_id)
            kept = min(common_prefix(slot.tokens, wanted), len(wanted) - 1)
            best = ReusePlan(kept, (), len(wanted))
            source = "saved" if best.prefix else "cold"
        elif donor is not None and shared >= best.reused + MIN_GAIN:
            self._copy(donor, slot, shared)
            best = ReusePlan(shared, (), len(wanted))
            source = "copy"
            self.stats.copied += 1
        self._apply(slot, best)
        slot.tokens = wanted[: best.prefix]
        slot.busy = True
        slot.used = next(self._clock)
        self.stats.claims += 1
        self.stats.moved_tokens += best.reused - best.prefix
        return Claim(slot, best, source)

    def _copy(self, donor: Slot, slot: Slot, shared: int) -> None:
        """Give ``slot`` the first ``shared`` tokens' KV of ``donor``."""
        self.remove(slot.seq, -1, -1)
        if self.shared_cells:
            llama_cpp.llama_memory_seq_cp(self.memory, donor.seq, slot.seq, 0, shared)
        else:  # across streams llama.cpp copies whole streams (at the next decode)
            llama_cpp.llama_memory_seq_cp(self.memory, donor.seq, slot.seq, -1, -1)
            self.remove(slot.seq, shared, -1)
        slot.tokens = donor.tokens[:shared]

    def _plan(self, cached: list[int], wanted: list[int], move: bool) -> ReusePlan:
        return plan_reuse(cached, wanted, min_chunk=MIN_CHUNK, max_gap=self.max_gap, move=move)

    def _keep_for_later(
        self, slot: Slot, wanted: list[int], plan: ReusePlan, keep: StateKey | None
    ) -> None:
        """Save the slot's state to host memory when the new prompt throws most of it away
        (never evicting the saved state ``keep``)."""
        lost = len(slot.tokens) - plan.reused
        if lost >= MIN_TOKENS and plan.reused < len(slot.tokens) // 2:
            self.states.save(self.ctx, slot.seq, slot.tokens, keep)

    def _apply(self, slot: Slot, plan: ReusePlan) -> None:
        """Drop what the plan does not keep and move the kept chunks to their positions."""
        at = plan.prefix
        for move in plan.moves:
            if move.start > at:
                self.remove(slot.seq, at, move.start)
            at = move.end
        self.remove(slot.seq, at, -1)
        for move in plan.shift_order():
            llama_cpp.llama_memory_seq_add(self.memory, slot.seq, move.start, move.end, move.delta)

    def held(self) -> list[tuple[int, list[int]]]:
        """The sequence and tokens of every slot that holds any, least recently used first."""
        holding = sorted((slot for slot in self.slots if slot.tokens), key=lambda s: s.used)
        return [(slot.seq, list(slot.tokens)) for slot in holding]

    def release(self, slot: Slot) -> None:
        slot.busy = False

    def reset(self, slot: Slot) -> None:
        """Forget a slot's KV (after a failed decode)."""
        self.remove(slot.seq, -1, -1)
        slot.tokens = []

    # With a stream per sequence, llama.cpp decodes several sequences' tokens in one pass only when
    # their sequence numbers are consecutive and increasing; otherwise it splits the batch into one
    # pass per run, each costing nearly a whole step. Copying a stream costs a few milliseconds,
    # against tens for every extra pass.
    def arrange(self, decoded: list[Slot]) -> int:
        """Move the slots of ``decoded`` (the jobs of the next step) into consecutive streams,
        exchanging each one outside the window that already holds most of them with a slot
        inside it that is not decoded. Returns how many exchanges it made; a no-op in a
        unified cache (one stream)."""
        seqs = sorted(slot.seq for slot in decoded)
        count = len(seqs)
        if self.shared_cells or count < 2 or seqs[-1] - seqs[0] == count - 1:
            return 0
        inside = {
            start: sum(start <= seq < start + count for seq in seqs)
            for start in range(len(self.slots) - count + 1)
        }
        start = max(inside, key=lambda s: (inside[s], -abs(s - seqs[0])))
        by_seq = {slot.seq: slot for slot in self.slots}
        chosen = {id(slot) for slot in decoded}
        targets = [
            by_seq[seq] for seq in range(start, start + count) if id(by_seq[seq]) not in chosen
        ]
        outside = [slot for slot in decoded if not start <= slot.seq < start + count]
        swaps = 0
        for slot, target in zip(outside, targets, strict=True):
            if not self._exchange(slot, target):
                break
            swaps += 1
        self.stats.swapped += swaps
        return swaps

    def _exchange(self, one: Slot, other: Slot) -> bool:
        """Exchange two slots' streams: each keeps its tokens and now lives in the other's
        stream. Copies what they hold (through the spare stream when both hold something);
        False when both hold something and there is no spare."""
        a, b = one.seq, other.seq
        if one.tokens and other.tokens:
            if self.spare is None:
                return False
            self._move(a, self.spare)
            self._move(b, a)
            self._move(self.spare, b)
        elif one.tokens:
            self._move(a, b)
        elif other.tokens:
            self._move(b, a)
        one.seq, other.seq = b, a
        return True

    def _move(self, source: int, target: int) -> None:
        """Copy stream ``source`` over stream ``target`` (queued by llama.cpp, done in order
        before the next decode) and empty ``source``."""
        llama_cpp.llama_memory_seq_cp(self.memory, source, target, -1, -1)
        self.remove(source, -1, -1)

    def evict(self) -> bool:
        """Empty the least recently used free slot that holds anything (saving its state
        first); False when there is none."""
        holding = [slot for slot in self.free if slot.tokens]
        if not holding:
            return False
        slot = min(holding, key=lambda s: s.used)
        self.states.save(self.ctx, slot.seq, slot.tokens)
        self.reset(slot)
        self.stats.evicted += 1
        return True


def _worth(plan: ReusePlan, slot: Slot) -> int:
    """What a plan saves, counted only when it keeps a real share of the slot's content."""
    if plan.reused >= MIN_GAIN or plan.reused * 2 >= len(slot.tokens):
        return plan.reused
    return 0
