"""Routing among remote backends: prefix hashes, what each backend holds, and the choice."""

from __future__ import annotations

import pytest

from daemon.engine.remote.pool import BackendPool
from daemon.engine.remote.routing import (
    BLOCK_TOKENS,
    PrefixMemory,
    placing_key,
    prefix_hashes,
)

HEADER = list(range(1000, 1000 + 2 * BLOCK_TOKENS))  # an opening every prompt shares


def prompt(document: int, length: int = 6 * BLOCK_TOKENS) -> list[int]:
    body = [document * 10_000 + i for i in range(length)]
    return HEADER + body


def test_a_block_hash_names_the_whole_prefix_before_it():
    a = prefix_hashes(list(range(100)))
    b = prefix_hashes([7, *range(1, 100)])  # the first token differs
    assert len(a) == 100 // BLOCK_TOKENS
    assert all(x != y for x, y in zip(a, b, strict=True))  # every later block differs too
    assert prefix_hashes([*range(100), 5]) == a  # a partial block adds nothing
    assert prefix_hashes([]) == []


def test_a_memory_holds_leading_blocks_and_forgets_the_oldest():
    memory = PrefixMemory(capacity=4)
    hashes = prefix_hashes(prompt(1))
    memory.remember(hashes[:3])
    assert memory.held(hashes) == 3
    assert memory.held(prefix_hashes(prompt(2))) == len(HEADER) // BLOCK_TOKENS
    memory.remember(prefix_hashes(prompt(3))[2:5])  # three more: the oldest two go
    assert len(memory) == 4
    assert memory.held(hashes) == 0
    memory.forget()
    assert len(memory) == 0


def test_the_placing_key_skips_what_every_backend_holds():
    tokens = prompt(1)
    hashes = prefix_hashes(tokens)
    assert placing_key(tokens, hashes, 2) == hashes[2]
    other = prompt(2)
    assert placing_key(other, prefix_hashes(other), 2) != hashes[2]
    # All whole blocks held: the tail beyond them decides.
    short = tokens[: 2 * BLOCK_TOKENS + 5]
    assert placing_key(short, prefix_hashes(short), 2) != placing_key(
        short[:-1], prefix_hashes(short[:-1]), 2
    )


@pytest.fixture
def pool():
    made = BackendPool([f"http://10.0.0.{i}:8080" for i in range(1, 4)], limit=2)
    for server in made.servers:
        server.up = True  # as a health check would have found them
    yield made
    made.close()


def test_a_document_goes_back_to_the_backend_that_holds_it(pool):
    first = pool.acquire(prompt(1))
    assert first is not None
    pool.release(first)
    typed = prompt(1) + [42] * BLOCK_TOKENS  # the same document, typed on
    for _ in range(3):
        again = pool.acquire(typed)
        assert again is first
        pool.release(again)
    assert pool.cached([*typed, 7, 8]) == len(typed)  # it was sent the typed prompt too
    assert pool.cached(prompt(2)) == len(HEADER)


def test_new_documents_spread_over_the_backends(pool):
    chosen = set()
    for document in range(2, 14):
        server = pool.acquire(prompt(document))
        assert server is not None
        chosen.add(server.url)
        pool.release(server)
    assert len(chosen) == 3


def test_a_full_or_dead_backend_is_passed_over_and_none_is_free_when_all_are(pool):
    holder = pool.acquire(prompt(1))
    assert holder is not None
    second = pool.acquire(prompt(1))  # the holder has room for one more
    assert second is holder
    third = pool.acquire(prompt(1))  # now it is full: another takes it
    assert third is not None and third is not holder
    pool.taken_out(third, "refused")
    assert not third.up and third.last_error == "refused" and len(third.prefixes) == 0
    rest = [s for s in pool.servers if s not in (holder, third)]
    assert pool.acquire(prompt(5)) is rest[0]
    assert pool.acquire(prompt(6)) is rest[0]
    assert pool.acquire(prompt(7)) is None  # every place on a live backend is taken
    assert not pool.room()
    pool.release(rest[0])
    assert pool.room()
    assert pool.acquire(prompt(1), exclude=rest) is None
