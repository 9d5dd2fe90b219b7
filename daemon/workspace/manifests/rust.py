"""Rust: edition, rust-version and dependencies from Cargo.toml, pinned by Cargo.lock.
Workspace inheritance is followed; the rust-toolchain file gives the channel.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from daemon.protocol import Framework
from daemon.workspace.manifests.formats import table_at
from daemon.workspace.manifests.frameworks import pin_frameworks
from daemon.workspace.manifests.reader import MAX_LOCK_BYTES, Dep, Found, Reader


def _cargo_spec(value: Any, workspace_deps: dict[str, Any], name: str) -> tuple[str, str | None]:
    """(package name, requirement) of one Cargo dependency entry."""
    if isinstance(value, dict) and value.get("workspace") is True:
        inherited = workspace_deps.get(name)
        package = value.get("package") or (
            inherited.get("package") if isinstance(inherited, dict) else None
        )
        _, spec = _cargo_spec(inherited, {}, name)
        return str(package or name), spec
    if isinstance(value, str):
        return name, value
    if isinstance(value, dict):
        version = value.get("version")
        return str(value.get("package") or name), version if isinstance(version, str) else None
    return name, None


def _semver_compatible(requirement: str | None, version: str) -> bool:
    """Cargo's default (caret) compatibility, enough to choose among several locked versions."""
    if not requirement:
        return True
    req = re.findall(r"\d+", requirement.split(",")[0])
    have = re.findall(r"\d+", version)
    if not req or not have:
        return True
    significant = next((i for i, part in enumerate(req) if part != "0"), len(req) - 1)
    return req[: significant + 1] == have[: significant + 1]


def read_rust(r: Reader) -> tuple[Found, list[Framework]]:
    found = Found()
    manifests: list[tuple[Path, dict[str, Any]]] = []
    for candidate in r.every("Cargo.toml"):
        if (parsed := r.toml(candidate)) is not None:
            manifests.append((candidate, parsed))
    deps: list[Dep] = []
    if manifests:
        path, data = manifests[0]
        src = r.rel(path)
        # A member inherits from the nearest manifest with a [workspace] table.
        workspace = next((table_at(d, "workspace") for _, d in manifests if "workspace" in d), {})
        ws_package = table_at(workspace, "package")
        ws_deps = table_at(workspace, "dependencies")
        package = table_at(data, "package") if "package" in data else None
        for key, version_key in (("edition", "rust-edition"), ("rust-version", "rust")):
            value = package.get(key) if package else None
            if package is None or (isinstance(value, dict) and value.get("workspace")):
                value = ws_package.get(key)  # inherited from [workspace.package]
            if isinstance(value, str):
                found.version(version_key, value)
        tables = [data.get("dependencies"), data.get("dev-dependencies")] if package else [ws_deps]
        for table in tables:
            for name, value in table.items() if isinstance(table, dict) else []:
                package_name, spec = _cargo_spec(value, ws_deps, name)
                deps.append(Dep(package_name, spec, src))
    toolchain = r.nearest("rust-toolchain.toml", "rust-toolchain")
    text = r.text(toolchain) if toolchain else None
    if text:
        try:
            channel = tomllib.loads(text).get("toolchain", {}).get("channel")
        except (tomllib.TOMLDecodeError, AttributeError):
            channel = text.strip().splitlines()[0] if text.strip() else None
        found.version("rust-toolchain", channel)
    lock = r.nearest("Cargo.lock") if deps else None
    locked: dict[str, list[str]] = {}
    lock_data = r.toml(lock, MAX_LOCK_BYTES) if lock else None
    packages = lock_data.get("package") if lock_data else None
    for item in packages if isinstance(packages, list) else []:
        if isinstance(item, dict) and item.get("name") and item.get("version"):
            locked.setdefault(str(item["name"]), []).append(str(item["version"]))

    def pin(dep: Dep) -> tuple[str, str] | None:
        versions = locked.get(dep.name)
        if not versions or lock is None:
            return None
        fitting = [v for v in versions if _semver_compatible(dep.spec, v)] or versions
        return fitting[-1], r.rel(lock)

    return found, pin_frameworks(deps, "rust", pin)
