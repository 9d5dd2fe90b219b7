"""Node: engines and dependencies from package.json, pinned by the npm, pnpm or yarn lockfile.
Also .nvmrc and .node-version, and the TypeScript version and tsconfig.json's target.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from daemon.protocol import Framework
from daemon.workspace.manifests.formats import parse_simple_yaml
from daemon.workspace.manifests.frameworks import no_pin, pin_frameworks
from daemon.workspace.manifests.reader import MAX_LOCK_BYTES, Dep, Found, Reader


def read_node(r: Reader) -> tuple[Found, list[Framework]]:
    found = Found()
    deps: list[Dep] = []
    package_json = r.nearest("package.json")
    data = r.json(package_json) if package_json else None
    if package_json and isinstance(data, dict):
        src = r.rel(package_json)
        engines = data.get("engines")
        if isinstance(engines, dict):
            found.version("node", engines.get("node"))
        for section in ("dependencies", "devDependencies"):
            table = data.get(section)
            for name, spec in table.items() if isinstance(table, dict) else []:
                deps.append(Dep(name, spec if isinstance(spec, str) else None, src))
    for name in (".nvmrc", ".node-version"):
        path = r.nearest(name)
        text = r.text(path) if path else None
        if text and text.strip():
            found.version("node", text.strip().splitlines()[0].strip().removeprefix("v"))
    # No dependencies, no need to read a lockfile that can be megabytes long.
    pin = _node_pinner(r, package_json.parent) if package_json and deps else no_pin
    frameworks = pin_frameworks(deps, "node", pin)
    typescript = next((f for f in frameworks if f.name == "typescript"), None)
    if typescript:
        found.version("typescript", typescript.version)
    _tsconfig(r, found)
    return found, frameworks


def _node_pinner(r: Reader, package_dir: Path) -> Callable[[Dep], tuple[str, str] | None]:
    lock = r.nearest("package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml", "yarn.lock")
    if lock is None:
        return no_pin
    src = r.rel(lock)
    try:
        prefix = package_dir.relative_to(lock.parent).as_posix()
    except ValueError:
        prefix = "."
    if lock.name == "yarn.lock":
        text = r.text(lock, MAX_LOCK_BYTES) or ""
        by_descriptor, by_name = _yarn_entries(text)

        def yarn_pin(dep: Dep) -> tuple[str, str] | None:
            for descriptor in (f"{dep.name}@{dep.spec}", f"{dep.name}@npm:{dep.spec}"):
                if descriptor in by_descriptor:
                    return by_descriptor[descriptor], src
            return (by_name[dep.name], src) if dep.name in by_name else None

        return yarn_pin
    if lock.name == "pnpm-lock.yaml":
        pins = _pnpm_pins(r.text(lock, MAX_LOCK_BYTES) or "", prefix)
        return lambda dep: (pins[dep.name], src) if dep.name in pins else None
    data = r.json(lock, MAX_LOCK_BYTES)
    if not isinstance(data, dict):
        return no_pin
    packages = data.get("packages")
    v1 = data.get("dependencies")

    def npm_pin(dep: Dep) -> tuple[str, str] | None:
        if isinstance(packages, dict):  # lockfileVersion 2 and 3
            keys = [f"node_modules/{dep.name}"]
            if prefix != ".":
                keys.insert(0, f"{prefix}/node_modules/{dep.name}")
            for key in keys:
                entry = packages.get(key)
                if isinstance(entry, dict) and isinstance(entry.get("version"), str):
                    return entry["version"], src
        if isinstance(v1, dict):  # lockfileVersion 1
            entry = v1.get(dep.name)
            if isinstance(entry, dict) and isinstance(entry.get("version"), str):
                return entry["version"], src
        return None

    return npm_pin


def _yarn_entries(text: str) -> tuple[dict[str, str], dict[str, str]]:
    """yarn.lock (classic and berry): version by descriptor ("react@^18.2.0"), and by name."""
    by_descriptor: dict[str, str] = {}
    by_name: dict[str, str] = {}
    descriptors: list[str] = []
    for line in text.splitlines():
        if not line or line[0] == "#":
            continue
        if not line[0].isspace():
            head = line.rstrip()
            descriptors = (
                [d.strip().strip('"').strip() for d in head[:-1].split(",")]
                if head.endswith(":")
                else []
            )
            continue
        if descriptors and (m := re.match(r'  version:? +"?([^"\s]+)"?\s*$', line)):
            for descriptor in descriptors:
                by_descriptor[descriptor] = m.group(1)
                at = descriptor.find("@", 1)
                if at > 0:
                    by_name.setdefault(descriptor[:at], m.group(1))
            descriptors = []
    return by_descriptor, by_name


def _pnpm_pins(text: str, importer: str) -> dict[str, str]:
    """pnpm-lock.yaml (v5 to v9): the versions the importer's direct dependencies resolved to."""
    end = re.search(r"^(?:packages|snapshots):", text, re.MULTILINE)
    data = parse_simple_yaml(text[: end.start()] if end else text)
    importers = data.get("importers")
    section = importers.get(importer) if isinstance(importers, dict) else data
    pins: dict[str, str] = {}
    for group in ("dependencies", "devDependencies", "optionalDependencies"):
        table = section.get(group) if isinstance(section, dict) else None
        for name, entry in table.items() if isinstance(table, dict) else []:
            value = entry.get("version") if isinstance(entry, dict) else entry
            if value is None:
                continue
            # 18.2.0(react@18.2.0) in v6+, 18.2.0_react@18.2.0 in v5; link: and file: pin nothing.
            version = str(value).split("(", 1)[0].split("_", 1)[0].strip()
            if version and not re.match(r"(link|file|workspace):", version):
                pins[name] = version
    return pins


def _tsconfig(r: Reader, found: Found) -> None:
    path = r.nearest("tsconfig.json")
    data = r.json(path, comments=True) if path else None
    if not path or not isinstance(data, dict):
        return
    options = data.get("compilerOptions")
    target = options.get("target") if isinstance(options, dict) else None
    if target is None:
        # Follow a relative ``extends`` once (the common base-config pattern).
        extends = data.get("extends")
        for base in extends if isinstance(extends, list) else [extends]:
            if not isinstance(base, str) or not base.startswith("."):
                continue
            base_path = path.parent / base
            if not base_path.is_file() and base_path.suffix != ".json":
                base_path = base_path.with_name(base_path.name + ".json")
            base_data = r.json(base_path, comments=True) if base_path.is_file() else None
            if isinstance(base_data, dict) and isinstance(base_data.get("compilerOptions"), dict):
                target = base_data["compilerOptions"].get("target") or target
    if isinstance(target, str):
        found.version("ts-target", target)
