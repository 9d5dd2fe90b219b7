"""The real model's KV states read as ``daemon.engine.kv_splice`` expects: a state parsed and
written back is byte for byte what llama.cpp wrote, and a joined state is accepted."""

from __future__ import annotations

import llama_cpp

from daemon.engine.kv_splice import join, parse_state, read_state, splice, write_state
from daemon.engine.kv_states import SequenceStates
from daemon.engine.scheduler import Scheduler
from daemon.engine.worker import Engine
from models.loaded import LoadedModel
from tests.e2e.test_engine_batching import DOCUMENTS, LONG_FILE, answer, tokens_of


def test_a_real_state_round_trips_and_joins(engine_model: LoadedModel):
    engine = Engine(engine_model, Scheduler(4, 4), SequenceStates(0), parallel=2)
    engine.start()
    try:
        long, short = tokens_of(engine_model, LONG_FILE), tokens_of(engine_model, DOCUMENTS[0])
        answer(engine, long, 0)
        answer(engine, short, 0)
        ctx = engine_model.llm._ctx.ctx
        memory = llama_cpp.llama_get_memory(ctx)
        by_start = {tuple(slot.tokens[:8]): slot for slot in engine.slots.slots if slot.tokens}
        first, second = by_start[tuple(long[:8])], by_start[tuple(short[:8])]
        a, b, n = first.seq, second.seq, len(first.tokens)
        raw = read_state(ctx, a)
        state = parse_state(raw)
        assert bytes(state.to_bytes()) == bytes(raw)
        assert state.positions.tolist() == list(range(n))
        # The short document's cells, then the long one's from there on: one sequence with
        # every position once, which llama.cpp takes back.
        at = len(second.tokens)
        joined = join(parse_state(read_state(ctx, b)), state, at)
        assert sorted(joined.positions.tolist()) == list(range(n))
        assert write_state(ctx, a, joined.to_bytes())
        assert llama_cpp.llama_memory_seq_pos_max(memory, a) == n - 1
        assert splice(ctx, b, a, at)
        assert parse_state(read_state(ctx, a)).positions.tolist() == list(range(n))
    finally:
        engine.close()
