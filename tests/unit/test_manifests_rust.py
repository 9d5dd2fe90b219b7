"""Rust versions and frameworks: Cargo.toml workspaces, Cargo.lock, rust-toolchain."""

from __future__ import annotations

from pathlib import Path

from tests.unit.manifest_files import pins, read, write


def test_cargo_workspace_inheritance(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "Cargo.toml": """
[workspace]
members = ["crates/*"]
resolver = "2"

[workspace.package]
edition = "2021"
rust-version = "1.74"

[workspace.dependencies]
serde = { version = "1.0", features = ["derive"] }
rand = "0.8"
""",
            "Cargo.lock": """version = 3

[[package]]
name = "rand"
version = "0.7.3"

[[package]]
name = "rand"
version = "0.8.5"

[[package]]
name = "serde"
version = "1.0.203"
""",
            "crates/core/Cargo.toml": """
[package]
name = "core"
version = "0.1.0"
edition.workspace = true
rust-version.workspace = true

[dependencies]
serde = { workspace = true }
rand.workspace = true
my-log = { package = "log", version = "0.4" }
""",
            "rust-toolchain": "nightly-2024-05-01\n",
        },
    )
    info = read(tmp_path, "rust", "crates/core/src")
    assert info.versions == {
        "rust-edition": "2021",
        "rust": "1.74",
        "rust-toolchain": "nightly-2024-05-01",
    }
    assert pins(info) == [
        ("serde", "1.0.203", "Cargo.lock"),
        ("rand", "0.8.5", "Cargo.lock"),
        ("log", "0.4", "crates/core/Cargo.toml"),
    ]


def test_virtual_workspace_lists_workspace_dependencies(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "Cargo.toml": '[workspace]\nmembers = []\n[workspace.dependencies]\ntokio = "1"\n',
        },
    )
    assert pins(read(tmp_path, "rust")) == [("tokio", "1", "Cargo.toml")]
