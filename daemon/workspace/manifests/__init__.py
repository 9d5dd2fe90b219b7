"""Language versions and frameworks, read from a workspace's manifests and lockfiles.
Nothing here raises on a bad file: unreadable, huge, binary or malformed files are skipped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from daemon.protocol import Framework
from daemon.workspace.manifests.cmake import read_cmake
from daemon.workspace.manifests.formats import parse_simple_yaml, strip_json_comments
from daemon.workspace.manifests.frameworks import known_rank
from daemon.workspace.manifests.go import read_go
from daemon.workspace.manifests.jvm import read_jvm
from daemon.workspace.manifests.node import read_node
from daemon.workspace.manifests.python import normalize_python_name, read_python
from daemon.workspace.manifests.reader import (
    MAX_LOCK_BYTES,
    MAX_MANIFEST_BYTES,
    Found,
    Reader,
    read_text,
)
from daemon.workspace.manifests.rust import read_rust

__all__ = [
    "ECOSYSTEMS",
    "MANIFEST_FILES",
    "MAX_FRAMEWORKS",
    "MAX_LOCK_BYTES",
    "MAX_MANIFEST_BYTES",
    "ManifestInfo",
    "normalize_python_name",
    "parse_simple_yaml",
    "read_manifests",
    "read_text",
    "strip_json_comments",
]

log = logging.getLogger(__name__)

MAX_FRAMEWORKS = 24
ECOSYSTEMS = ("python", "node", "go", "rust", "jvm", "cmake")

# Files whose content a reader uses, by ecosystem; workspace.py watches them.
MANIFEST_FILES: dict[str, tuple[str, ...]] = {
    "python": (
        "pyproject.toml",
        "uv.lock",
        "poetry.lock",
        "pdm.lock",
        "Pipfile",
        "Pipfile.lock",
        ".python-version",
        "runtime.txt",
    ),
    "node": (
        "package.json",
        "package-lock.json",
        "npm-shrinkwrap.json",
        "pnpm-lock.yaml",
        "yarn.lock",
        ".nvmrc",
        ".node-version",
        "tsconfig.json",
    ),
    "go": ("go.mod",),
    "rust": ("Cargo.toml", "Cargo.lock", "rust-toolchain", "rust-toolchain.toml"),
    "jvm": ("pom.xml", "build.gradle", "build.gradle.kts", "gradle.properties"),
    "cmake": ("CMakeLists.txt", "vcpkg.json", "conanfile.txt"),
}


@dataclass
class ManifestInfo:
    """What the manifests say: versions by key, frameworks, and the files read (relative)."""

    versions: dict[str, str] = field(default_factory=dict)
    frameworks: list[Framework] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)


_READERS: dict[str, Callable[[Reader], tuple[Found, list[Framework]]]] = {
    "python": read_python,
    "node": read_node,
    "go": read_go,
    "rust": read_rust,
    "jvm": read_jvm,
    "cmake": read_cmake,
}


def read_manifests(ecosystems: Iterable[str], dirs: Sequence[Path], root: Path) -> ManifestInfo:
    """Versions and frameworks of ``ecosystems``, from manifests in ``dirs`` (nearest first).

    Frameworks are ordered well-known first (by importance), then in manifest order, at most
    ``MAX_FRAMEWORKS``; paths in the result are relative to ``root``.

    Each ecosystem's reader looks from the file's directory up to the workspace root, so the
    nearest manifest of each kind wins (right for monorepos), and pins every direct dependency
    to the version its lockfile resolved, or else to the range its manifest asks for.
    """
    reader = Reader(dirs, root)
    info = ManifestInfo()
    ranked: list[tuple[bool, int, int, int, Framework]] = []
    seen: set[str] = set()
    for eco_index, ecosystem in enumerate(e for e in ecosystems if e in _READERS):
        try:
            found, frameworks = _READERS[ecosystem](reader)
        except Exception:  # a reader bug must not take the profile down
            log.debug("reading %s manifests failed", ecosystem, exc_info=True)
            continue
        for key, value in found.versions.items():
            info.versions.setdefault(key, value)
        for position, framework in enumerate(frameworks):
            if framework.name in seen:
                continue
            seen.add(framework.name)
            rank = known_rank(framework.name, ecosystem)
            ranked.append((rank is None, rank or 0, eco_index, position, framework))
    ranked.sort(key=lambda item: item[:4])
    info.frameworks = [item[4] for item in ranked[:MAX_FRAMEWORKS]]
    info.sources = reader.sources
    return info
