"""Planning KV reuse after an edit: the prefix, the moved chunks, the gaps left to evaluate."""

from __future__ import annotations

from daemon.engine.reuse import Move, ReusePlan, plan_reuse

FILE = list(range(100, 400))  # 300 distinct "tokens"


def plan(cached, wanted, min_chunk=16, max_gap=32, move=True) -> ReusePlan:
    return plan_reuse(cached, wanted, min_chunk=min_chunk, max_gap=max_gap, move=move)


def test_typing_at_the_end_keeps_the_whole_prefix():
    p = plan(FILE, [*FILE, 1, 2, 3])
    assert p.prefix == 300 and p.moves == () and p.gaps() == [(300, 303)]


def test_the_last_token_is_always_evaluated():
    p = plan(FILE, FILE)
    assert p.prefix == 299 and p.gaps() == [(299, 300)]


def test_an_insertion_near_the_top_moves_the_rest_down():
    wanted = [*FILE[:10], 1, 2, 3, 4, *FILE[10:]]
    p = plan(FILE, wanted)
    assert p.prefix == 10
    assert p.moves == (Move(10, 299, 14),)  # up to the last token, which is evaluated
    assert p.gaps() == [(10, 14), (303, 304)]
    assert p.reused == 10 + 289


def test_a_deletion_near_the_top_moves_the_rest_up():
    wanted = FILE[:10] + FILE[20:]
    p = plan(FILE, wanted)
    assert p.moves == (Move(20, 299, 10),)
    assert p.gaps() == [(289, 290)]


def test_a_changed_line_keeps_what_follows_it():
    wanted = [*FILE[:50], 7, 8, *FILE[53:]]
    p = plan(FILE, wanted)
    assert p.prefix == 50 and p.moves[0] == Move(53, 299, 52)
    assert p.gaps()[0] == (50, 52)


def test_a_gap_longer_than_the_limit_ends_the_reuse():
    wanted = FILE[:10] + list(range(1000, 1100)) + FILE[10:]
    p = plan(FILE, wanted, max_gap=32)
    assert p.moves == () and p.gaps() == [(10, len(wanted))]


def test_chunks_shorter_than_the_minimum_are_evaluated_again():
    wanted = [*FILE[:10], 1, *FILE[10:20], 2, *list(range(900, 1000))]
    p = plan(FILE, wanted, min_chunk=16)
    assert p.moves == ()


def test_prefix_only_when_moving_is_off():
    wanted = [*FILE[:10], 1, 2, *FILE[10:]]
    p = plan(FILE, wanted, move=False)
    assert p.prefix == 10 and p.moves == () and p.reused == 10


def test_moves_are_applied_in_an_order_that_never_collides():
    left, right = Move(40, 60, 30), Move(80, 100, 90)
    p = ReusePlan(10, (Move(20, 30, 12), left, Move(60, 70, 50), right, Move(100, 120, 115)), 140)
    order = p.shift_order()
    assert order[:3] == [Move(20, 30, 12), left, Move(60, 70, 50)]
    assert order[3:] == [Move(100, 120, 115), right]
    # Simulate: every moved range must land where no unmoved chunk still sits.
    where = {m: (m.start, m.end) for m in p.moves}
    for move in order:
        target = (move.to, move.to + move.size)
        for other, (a, b) in where.items():
            if other is not move:
                assert target[1] <= a or target[0] >= b, (move, other)
        where[move] = target
