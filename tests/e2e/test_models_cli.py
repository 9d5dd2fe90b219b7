"""`assist models` on this installation, and model names given to the command line."""

from __future__ import annotations

import json

from models.catalog import CATALOG, DEFAULT_MODEL, chunk_file
from tests.e2e.conftest import free_port
from tests.e2e.test_cli import assist


def test_the_installed_chunks_add_up_to_each_catalogue_model():
    for model in CATALOG.values():
        paths = [chunk_file(chunk) for chunk in model.chunks]
        assert all(p is not None and p.is_file() for p in paths), model.name
        assert sum(p.stat().st_size for p in paths if p is not None) == model.size


def test_models_lists_both_models_installed_and_the_default_assembled(daemon):
    # The session daemon runs the default model, so its file is assembled in the cache.
    out = assist("models", "--json", "--cache-dir", str(daemon.settings.cache_dir))
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["default"] == DEFAULT_MODEL == "qwen2.5-coder-0.5b"
    rows = {row["name"]: row for row in data["models"]}
    assert set(rows) == {"qwen2.5-coder-0.5b", "gemma-3-270m"}
    assert all(row["installed"] for row in rows.values())
    qwen, gemma = rows["qwen2.5-coder-0.5b"], rows["gemma-3-270m"]
    assert qwen["default"] and not gemma["default"]
    assert qwen["assembled"] and qwen["path"] == daemon.health.model_path
    assert qwen["prompt_format"] == "qwen2.5-coder" and gemma["prompt_format"] == "plain"
    assert qwen["size"] == "469 MiB" and qwen["licence"] == "Apache-2.0"
    assert "Gemma" in gemma["licence"]

    cache_dir = str(daemon.settings.cache_dir)
    table = assist("models", "--cache-dir", cache_dir, "--model", "gemma-3-270m")
    assert table.returncode == 0, table.stderr
    lines = {line.split()[0]: line for line in table.stdout.splitlines() if line.strip()}
    assert "default" in lines["qwen2.5-coder-0.5b"] and "469 MiB" in lines["qwen2.5-coder-0.5b"]
    assert "configured" in lines["gemma-3-270m"] and "plain" in lines["gemma-3-270m"]
    assert "assist loads gemma-3-270m" in table.stdout


def test_an_unknown_model_name_is_refused_with_the_known_ones(tmp_path):
    for command in (["models"], ["serve", "--port", str(free_port())]):
        out = assist(*command, "--model", "gpt-5", timeout=60)
        assert out.returncode == 2, out.stdout + out.stderr
        assert "unknown model 'gpt-5'" in out.stderr
        assert "qwen2.5-coder-0.5b (default)" in out.stderr and "gemma-3-270m" in out.stderr
    # The environment variable is read and checked the same way.
    out = assist("models", env={"ASSIST_MODEL": "tiny"}, timeout=60)
    assert out.returncode == 2 and "unknown model 'tiny'" in out.stderr
