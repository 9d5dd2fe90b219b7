"""Manifests written into a temporary workspace and read back, for the manifest tests."""

from __future__ import annotations

from pathlib import Path

from daemon.workspace.manifests import ManifestInfo, read_manifests


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


def read(root: Path, ecosystem: str | tuple[str, ...], start: str = ".") -> ManifestInfo:
    """What the readers see for a file in ``start`` (relative to root)."""
    directory = (root / start).resolve()
    root = root.resolve()
    dirs = [directory]
    while dirs[-1] != root:
        dirs.append(dirs[-1].parent)
    ecosystems = (ecosystem,) if isinstance(ecosystem, str) else ecosystem
    return read_manifests(ecosystems, dirs, root)


def pins(info: ManifestInfo) -> list[tuple[str, str | None, str | None]]:
    return [(f.name, f.version, f.source) for f in info.frameworks]
