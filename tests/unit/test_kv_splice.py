"""Sequence states in llama.cpp's layout are read, joined at a position and written back;
layouts that are not a plain KV cache's are refused. The states here are written by a small
writer of that layout (the real model's round trip is in tests/e2e/test_kv_splice.py)."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from daemon.engine.kv_splice import UnsplicableState, join, parse_state

LAYERS = 2
K_ROW = 6  # bytes of one cell's K in a layer
V_ROWS, V_ELEMENT = 3, 2  # a transposed V: rows of elements, one per cell


def k_bytes(layer: int, pos: int, source: int) -> bytes:
    return bytes([source, layer, pos % 256] * (K_ROW // 3))


def v_element(layer: int, row: int, pos: int, source: int) -> bytes:
    return bytes([source * 16 + layer * 4 + row, pos % 256])


def state(
    positions: list[int],
    *,
    seq: int = 3,
    source: int = 1,
    stream: int = 1,
    streams: int = 2,
    v_trans: bool = True,
) -> bytes:
    """A state as llama.cpp writes it for a plain KV cache: header, then each stream's cells
    and data (only ``stream`` holds any). ``source`` tags every byte of K and V."""
    out = [struct.pack("<Ii", 0xAF143CD8, seq), struct.pack("<I", streams)]
    for s in range(streams):
        if s != stream:
            out.append(struct.pack("<I", 0))
            continue
        out.append(struct.pack("<I", len(positions)))
        out += [struct.pack("<iIi", pos, 1, seq) for pos in positions]
        out.append(struct.pack("<II", int(v_trans), LAYERS))
        for layer in range(LAYERS):
            out.append(struct.pack("<iQ", 1, K_ROW))
            out += [k_bytes(layer, pos, source) for pos in positions]
        for layer in range(LAYERS):
            if v_trans:
                out.append(struct.pack("<iII", 1, V_ELEMENT, V_ROWS))
                for row in range(V_ROWS):
                    out += [v_element(layer, row, pos, source) for pos in positions]
            else:
                out.append(struct.pack("<iQ", 1, V_ROWS * V_ELEMENT))
                for pos in positions:
                    out += [v_element(layer, row, pos, source) for row in range(V_ROWS)]
    return b"".join(out)


@pytest.mark.parametrize("v_trans", [True, False])
def test_a_state_is_read_and_written_back_byte_for_byte(v_trans):
    data = state([0, 1, 2, 5, 6], v_trans=v_trans)
    parsed = parse_state(data)
    assert parsed.positions.tolist() == [0, 1, 2, 5, 6]
    assert (parsed.stream, parsed.streams, parsed.v_trans) == (1, 2, v_trans)
    assert bytes(parsed.to_bytes()) == data


@pytest.mark.parametrize("v_trans", [True, False])
def test_joined_states_hold_each_cell_with_its_own_k_and_v(v_trans):
    # The head: a prefix and the edited lines (positions 0-5); the tail: the same prefix and
    # the chunks below the edit, already moved to positions 6-9.
    head = parse_state(state(list(range(6)), source=1, v_trans=v_trans))
    tail = parse_state(state([0, 1, 6, 7, 8, 9], source=2, v_trans=v_trans))
    joined = join(head, tail, 6)
    assert joined.positions.tolist() == list(range(10))
    # Cells 0-5 carry the head's bytes (source 1), cells 6-9 the tail's (source 2).
    for layer, got in enumerate(joined.layers):
        for i, pos in enumerate(range(10)):
            source = 1 if pos < 6 else 2
            assert bytes(got.k[i]) == k_bytes(layer, pos, source)
            for row in range(V_ROWS):
                element = got.v[row, i] if v_trans else got.v[i, row * V_ELEMENT :][:V_ELEMENT]
                assert bytes(element) == v_element(layer, row, pos, source)
    # Written out, it is a state of its own that reads back the same.
    assert parse_state(joined.to_bytes()).positions.tolist() == list(range(10))


def test_a_join_at_the_start_keeps_only_the_tail():
    head = parse_state(state([0, 1, 2], source=1))
    tail = parse_state(state([3, 4], source=2))
    assert join(head, tail, 0).positions.tolist() == [3, 4]
    assert join(head, tail, 3).positions.tolist() == [0, 1, 2, 3, 4]


def corrupt(data: bytes) -> list[bytes]:
    two_parts = data + data  # a sliding-window model writes two caches one after the other
    wrong_magic = b"\0\0\0\0" + data[4:]
    return [two_parts, wrong_magic, data[:-1], data[:12]]


@pytest.mark.parametrize("index", range(4), ids=["two-parts", "magic", "short", "header-only"])
def test_a_state_not_laid_out_as_a_plain_cache_is_refused(index):
    with pytest.raises(UnsplicableState):
        parse_state(corrupt(state([0, 1, 2]))[index])


def test_a_state_with_no_cells_or_cells_of_two_sequences_is_refused():
    with pytest.raises(UnsplicableState, match="no cells"):
        parse_state(state([]))
    shared = state([0, 1]).replace(struct.pack("<iIi", 1, 1, 3), struct.pack("<iIi", 1, 2, 3))
    with pytest.raises(UnsplicableState):
        parse_state(shared)
    assert parse_state(state([0, 1], stream=0)).stream == 0


def test_cells_of_one_sequence_in_two_streams_are_refused():
    one = state([0, 1], stream=0, streams=2)
    other = state([2, 3], stream=1, streams=2)
    # Stream 0's block from one, stream 1's block from the other, under one header.
    header = 12
    stream0 = one[header:][: len(one) - header - 4]  # stream 0's count, cells and data
    stream1 = other[header + 4 :]  # skip stream 0's zero count
    with pytest.raises(UnsplicableState, match="more than one stream"):
        parse_state(one[:header] + stream0 + stream1)


def test_a_join_of_states_of_different_caches_is_refused():
    with pytest.raises(UnsplicableState):
        join(parse_state(state([0], v_trans=True)), parse_state(state([1], v_trans=False)), 1)
    assert np.array_equal(parse_state(state([4, 2])).positions, [4, 2])
