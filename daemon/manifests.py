"""Language versions and frameworks, read from a workspace's manifests and lockfiles.

Each ecosystem's reader looks from the file's directory up to the workspace root, so the nearest
manifest of each kind wins (right for monorepos), and pins every direct dependency to the version
its lockfile resolved, or else to the range its manifest asks for. Nothing here raises on a bad
file: unreadable, huge, binary or malformed files are skipped with a debug log.
"""

from __future__ import annotations

import json
import logging
import os
import re
import tomllib
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from daemon.protocol import Framework

log = logging.getLogger(__name__)

MAX_MANIFEST_BYTES = 1 << 20
MAX_LOCK_BYTES = 16 << 20
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


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# Frameworks named first, in this order, because they shape the code most.
_KNOWN: dict[str, tuple[str, ...]] = {
    "python": _words(
        "django flask fastapi starlette pydantic sqlalchemy celery numpy pandas polars scipy"
        " scikit-learn torch tensorflow jax transformers aiohttp httpx requests pytest"
    ),
    "node": _words(
        "react next vue nuxt svelte @sveltejs/kit @angular/core solid-js express fastify"
        " @nestjs/core koa hono electron react-native typescript vite tailwindcss prisma jest"
        " vitest mocha @playwright/test"
    ),
    "go": _words(
        "github.com/gin-gonic/gin github.com/labstack/echo github.com/gofiber/fiber"
        " github.com/go-chi/chi github.com/gorilla/mux google.golang.org/grpc gorm.io/gorm"
        " github.com/jackc/pgx github.com/spf13/cobra github.com/stretchr/testify"
    ),
    "rust": _words(
        "actix-web axum rocket warp tokio async-std serde diesel sqlx tonic reqwest clap bevy"
        " tauri anyhow thiserror"
    ),
    "jvm": _words(
        "spring-boot spring quarkus micronaut ktor jakarta hibernate kotlinx-coroutines lombok"
        " jackson junit mockito"
    ),
    "cmake": _words(
        "boost qt eigen opencv abseil absl protobuf grpc fmt spdlog gtest googletest catch"
    ),
}


@dataclass
class ManifestInfo:
    """What the manifests say: versions by key, frameworks, and the files read (relative)."""

    versions: dict[str, str] = field(default_factory=dict)
    frameworks: list[Framework] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)


@dataclass
class _Dep:
    name: str
    spec: str | None
    source: str


@dataclass
class _Found:
    versions: dict[str, str] = field(default_factory=dict)
    frameworks: list[Framework] = field(default_factory=list)

    def version(self, key: str, value: Any) -> None:
        """Set a version unless an earlier (higher-precedence) source set it."""
        if key in self.versions or value is None:
            return
        text = str(value).strip()
        if text:
            self.versions[key] = text[:200]


class _Reader:
    """Finds and reads the files of one profile: capped, never raising, recording sources."""

    def __init__(self, dirs: Sequence[Path], root: Path) -> None:
        self.dirs = list(dirs)
        self.root = root
        self.sources: list[str] = []

    def rel(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.as_posix()

    def nearest(self, *names: str) -> Path | None:
        """The nearest file with one of ``names`` (earlier names win within a directory)."""
        for directory in self.dirs:
            for name in names:
                candidate = directory / name
                if candidate.is_file():
                    return candidate
        return None

    def every(self, name: str) -> list[Path]:
        return [d / name for d in self.dirs if (d / name).is_file()]

    def nearest_matching(self, predicate: Callable[[str], bool]) -> list[Path]:
        """All matching files of the nearest directory that has any."""
        for directory in self.dirs:
            try:
                names = sorted(e.name for e in os.scandir(directory) if predicate(e.name))
            except OSError:
                continue
            files = [directory / n for n in names if (directory / n).is_file()]
            if files:
                return files
        return []

    def text(self, path: Path, limit: int = MAX_MANIFEST_BYTES) -> str | None:
        text = read_text(path, limit)
        if text is not None:
            self.note(path)
        return text

    def note(self, path: Path) -> None:
        rel = self.rel(path)
        if rel not in self.sources:
            self.sources.append(rel)

    def toml(self, path: Path, limit: int = MAX_MANIFEST_BYTES) -> dict[str, Any] | None:
        text = read_text(path, limit)
        if text is None:
            return None
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            log.debug("skipping %s: %s", path, exc)
            return None
        self.note(path)
        return data

    def json(self, path: Path, limit: int = MAX_MANIFEST_BYTES, comments: bool = False) -> Any:
        text = read_text(path, limit)
        if text is None:
            return None
        try:
            data = json.loads(strip_json_comments(text) if comments else text)
        except (ValueError, RecursionError) as exc:
            log.debug("skipping %s: %s", path, exc)
            return None
        self.note(path)
        return data


def read_text(path: Path, limit: int = MAX_MANIFEST_BYTES) -> str | None:
    """A small text file's content, or None if it is missing, too big, binary or not UTF-8."""
    try:
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        log.debug("cannot read %s: %s", path, exc)
        return None
    if len(data) > limit:
        log.debug("skipping %s: larger than %d bytes", path, limit)
        return None
    if b"\x00" in data[:8192]:
        log.debug("skipping %s: binary", path)
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        log.debug("skipping %s: not UTF-8", path)
        return None


def strip_json_comments(text: str) -> str:
    """JSONC to JSON: drop // and /* */ comments and trailing commas, leaving strings intact."""
    out: list[str] = []
    comma = -1  # where in ``out`` a comma awaits the next value (dropped if none comes)
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            comma = -1
            i = j + 1
        elif text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        else:
            if ch in "}]" and comma >= 0:
                out[comma] = ""
            if ch == ",":
                comma = len(out)
            elif not ch.isspace():
                comma = -1
            out.append(ch)
            i += 1
    return "".join(out)


_YAML_LINE = re.compile(
    r"""^(?P<indent>\s*)(?:'(?P<sq>[^']*)'|"(?P<dq>[^"]*)"|(?P<plain>[^\s'"#][^#]*?))"""
    r"""\s*:(?:\s+(?P<value>.*?))?\s*$"""
)


def _yaml_scalar(value: str) -> str | int | bool:
    if value[:1] in "'\"":
        return value[1:].split(value[0], 1)[0]
    value = value.split(" #", 1)[0].strip()
    if value in ("true", "True", "false", "False"):
        return value.lower() == "true"
    if re.fullmatch(r"-?\d+", value):
        return int(value)
    return value


def parse_simple_yaml(text: str) -> dict[str, Any]:
    """Nested block mappings of plain scalars: enough for lockfiles and style configs.

    Lists and flow collections are skipped or kept as text; no YAML library is needed for the
    handful of keys we read.
    """
    root: dict[str, Any] = {}
    stack: list[tuple[int, dict[str, Any]]] = [(-1, root)]
    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped or stripped == "-" or stripped.startswith(("#", "---", "- ")):
            continue
        match = _YAML_LINE.match(raw)
        if not match:
            continue
        indent = len(match["indent"].expandtabs())
        key = match["sq"] if match["sq"] is not None else match["dq"]
        if key is None:
            key = match["plain"].strip()
        while stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]
        value = match["value"]
        if not value:
            child: dict[str, Any] = {}
            parent[key] = child
            stack.append((indent, child))
        else:
            parent[key] = _yaml_scalar(value)
    return root


def _table(data: Any, *keys: str) -> dict[str, Any]:
    """``data[k1][k2]...`` when every step is a table, else an empty one."""
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else {}


def normalize_python_name(name: str) -> str:
    """PEP 503: lowercase, runs of -_. become one -."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _version_or_range(spec: Any) -> str | None:
    """An exact pin as a bare version (==1.2 -> 1.2); any other requirement as written."""
    if spec is None:
        return None
    text = str(spec).strip()
    if not text or text == "*":
        return None
    exact = re.fullmatch(r"===?\s*([^\s,;*]+)", text)
    return exact.group(1) if exact else text


def _rank(name: str, ecosystem: str) -> int | None:
    known = _KNOWN.get(ecosystem, ())
    if ecosystem == "go":
        key = re.sub(r"/v\d+$", "", name)
        return known.index(key) if key in known else None
    if ecosystem == "cmake":
        key = re.sub(r"\d+$", "", name.lower())
        return known.index(key) if key in known else None
    if ecosystem == "jvm":
        artifact = name.rsplit(":", 1)[-1]
        for i, k in enumerate(known):
            if artifact == k or artifact.startswith((k + "-", k + ".")):
                return i
        return None
    return known.index(name) if name in known else None


def _frameworks(
    deps: Iterable[_Dep], ecosystem: str, pin: Callable[[_Dep], tuple[str, str] | None]
) -> list[Framework]:
    """Frameworks from direct deps, each pinned by the lockfile when it can be."""
    seen: set[str] = set()
    result: list[Framework] = []
    for dep in deps:
        if dep.name in seen or not dep.name:
            continue
        seen.add(dep.name)
        pinned = pin(dep)
        version, source = pinned or (_version_or_range(dep.spec), dep.source)
        result.append(
            Framework(name=dep.name[:200], version=version and version[:200], source=source)
        )
    return result


def _no_pin(dep: _Dep) -> tuple[str, str] | None:
    return None


# --- Python -------------------------------------------------------------------------------------

_PEP508 = re.compile(r"\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?:\[[^\]]*\])?\s*(.*)")


def _pep508(requirement: str, source: str) -> _Dep | None:
    match = _PEP508.fullmatch(requirement.split(";", 1)[0])
    if not match:
        return None
    spec = match.group(2).strip()
    if spec.startswith("@"):
        spec = ""  # a URL or path requirement pins no version we can name
    spec = spec.strip("()").strip()
    return _Dep(normalize_python_name(match.group(1)), spec or None, source)


def _poetry_spec(value: Any) -> str | None:
    if isinstance(value, list):
        value = value[0] if value else None
    if isinstance(value, dict):
        value = value.get("version")
    return str(value) if isinstance(value, str) else None


def _python(r: _Reader, found: _Found) -> list[_Dep]:
    deps: list[_Dep] = []
    pyproject = r.nearest("pyproject.toml")
    data = r.toml(pyproject) if pyproject else None
    poetry_python = None
    if pyproject and data:
        src = r.rel(pyproject)
        project = _table(data, "project")
        found.version("python", project.get("requires-python"))
        groups: list[Any] = [project.get("dependencies")]
        optional = project.get("optional-dependencies")
        if isinstance(optional, dict):
            groups += list(optional.values())
        dependency_groups = data.get("dependency-groups")
        if isinstance(dependency_groups, dict):
            groups += list(dependency_groups.values())
        groups.append(_table(data, "tool", "uv").get("dev-dependencies"))
        for group in groups:
            for item in group if isinstance(group, list) else []:
                if isinstance(item, str) and (dep := _pep508(item, src)):
                    deps.append(dep)
        poetry = _table(data, "tool", "poetry")
        tables = [_table(poetry, "dependencies"), _table(poetry, "dev-dependencies")]
        tables += [_table(group, "dependencies") for group in _table(poetry, "group").values()]
        for table in tables:
            for name, value in table.items():
                if name.lower() == "python":
                    poetry_python = _poetry_spec(value)
                else:
                    deps.append(_Dep(normalize_python_name(name), _poetry_spec(value), src))
    path = r.nearest(".python-version")
    text = r.text(path) if path else None
    if text:
        lines = [ln.strip() for ln in text.splitlines() if ln.strip() and ln[0] != "#"]
        found.version("python", lines[0] if lines else None)
    runtime = r.nearest("runtime.txt")
    text = r.text(runtime) if runtime else None
    if text and (m := re.search(r"python-(\d[\w.]*)", text)):
        found.version("python", m.group(1))
    requirement_files = r.nearest_matching(
        lambda n: n.startswith("requirements") and n.endswith(".txt")
    )
    # requirements.txt is the main file; requirements-dev.txt and the like add to it.
    requirement_files.sort(key=lambda p: (p.name != "requirements.txt", p.name))
    for path in requirement_files:
        text = r.text(path)
        deps += _requirements(text or "", r.rel(path))
    pipfile = r.nearest("Pipfile")
    data = r.toml(pipfile) if pipfile else None
    if pipfile and data:
        src = r.rel(pipfile)
        requires = _table(data, "requires")
        found.version("python", requires.get("python_version"))
        found.version("python", requires.get("python_full_version"))
        for table in (_table(data, "packages"), _table(data, "dev-packages")):
            for name, value in table.items():
                deps.append(_Dep(normalize_python_name(name), _poetry_spec(value), src))
    found.version("python", poetry_python)
    return deps


def _requirements(text: str, source: str) -> list[_Dep]:
    deps = []
    for line in text.replace("\\\n", " ").splitlines():
        line = re.split(r"(?:^|\s)#", line, maxsplit=1)[0].strip()
        if not line or line.startswith("-") or "://" in line.split("@")[0]:
            continue
        line = re.sub(r"\s--\S+.*$", "", line)  # --hash=... options after a requirement
        if dep := _pep508(line, source):
            deps.append(dep)
    return deps


def _python_pins(r: _Reader) -> dict[str, tuple[str, str]]:
    lock = r.nearest("uv.lock", "poetry.lock", "pdm.lock", "Pipfile.lock")
    if lock is None:
        return {}
    src = r.rel(lock)
    pins: dict[str, tuple[str, str]] = {}
    if lock.name == "Pipfile.lock":
        data = r.json(lock, MAX_LOCK_BYTES)
        for section in ("default", "develop"):
            table = data.get(section) if isinstance(data, dict) else None
            for name, entry in table.items() if isinstance(table, dict) else []:
                version = (
                    _version_or_range(entry.get("version")) if isinstance(entry, dict) else None
                )
                if version:
                    pins.setdefault(normalize_python_name(name), (version, src))
        return pins
    data = r.toml(lock, MAX_LOCK_BYTES)
    packages = data.get("package") if data else None
    for package in packages if isinstance(packages, list) else []:
        if isinstance(package, dict) and package.get("name") and package.get("version"):
            name = normalize_python_name(str(package["name"]))
            pins.setdefault(name, (str(package["version"]), src))
    return pins


def _read_python(r: _Reader) -> tuple[_Found, list[Framework]]:
    found = _Found()
    deps = _python(r, found)
    pins = _python_pins(r) if deps else {}
    return found, _frameworks(deps, "python", lambda d: pins.get(d.name))


# --- Node ---------------------------------------------------------------------------------------


def _read_node(r: _Reader) -> tuple[_Found, list[Framework]]:
    found = _Found()
    deps: list[_Dep] = []
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
                deps.append(_Dep(name, spec if isinstance(spec, str) else None, src))
    for name in (".nvmrc", ".node-version"):
        path = r.nearest(name)
        text = r.text(path) if path else None
        if text and text.strip():
            found.version("node", text.strip().splitlines()[0].strip().removeprefix("v"))
    # No dependencies, no need to read a lockfile that can be megabytes long.
    pin = _node_pinner(r, package_json.parent) if package_json and deps else _no_pin
    frameworks = _frameworks(deps, "node", pin)
    typescript = next((f for f in frameworks if f.name == "typescript"), None)
    if typescript:
        found.version("typescript", typescript.version)
    _tsconfig(r, found)
    return found, frameworks


def _node_pinner(r: _Reader, package_dir: Path) -> Callable[[_Dep], tuple[str, str] | None]:
    lock = r.nearest("package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml", "yarn.lock")
    if lock is None:
        return _no_pin
    src = r.rel(lock)
    try:
        prefix = package_dir.relative_to(lock.parent).as_posix()
    except ValueError:
        prefix = "."
    if lock.name == "yarn.lock":
        text = r.text(lock, MAX_LOCK_BYTES) or ""
        by_descriptor, by_name = _yarn_entries(text)

        def yarn_pin(dep: _Dep) -> tuple[str, str] | None:
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
        return _no_pin
    packages = data.get("packages")
    v1 = data.get("dependencies")

    def npm_pin(dep: _Dep) -> tuple[str, str] | None:
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


def _tsconfig(r: _Reader, found: _Found) -> None:
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


# --- Go -----------------------------------------------------------------------------------------


def _read_go(r: _Reader) -> tuple[_Found, list[Framework]]:
    found = _Found()
    path = r.nearest("go.mod")
    text = r.text(path) if path else None
    if not path or text is None:
        return found, []
    src = r.rel(path)
    deps: list[_Dep] = []
    block: str | None = None
    for line in text.splitlines():
        code, _, comment = line.partition("//")
        words = code.split()
        if not words:
            continue
        if block:
            if words[0] == ")":
                block = None
            elif block == "require" and len(words) >= 2 and "indirect" not in comment:
                deps.append(_Dep(words[0].strip('"'), words[1], src))
            continue
        if re.fullmatch(r"\w+\s*\(", code.strip()):
            block = code.strip().rstrip("(").strip()
        elif words[0] == "go" and len(words) > 1:
            found.version("go", words[1])
        elif words[0] == "toolchain" and len(words) > 1:
            found.version("go-toolchain", words[1].removeprefix("go"))
        elif words[0] == "require" and len(words) >= 3 and "indirect" not in comment:
            deps.append(_Dep(words[1].strip('"'), words[2], src))
    return found, _frameworks(deps, "go", _no_pin)


# --- Rust ---------------------------------------------------------------------------------------


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


def _read_rust(r: _Reader) -> tuple[_Found, list[Framework]]:
    found = _Found()
    manifests: list[tuple[Path, dict[str, Any]]] = []
    for candidate in r.every("Cargo.toml"):
        if (parsed := r.toml(candidate)) is not None:
            manifests.append((candidate, parsed))
    deps: list[_Dep] = []
    if manifests:
        path, data = manifests[0]
        src = r.rel(path)
        # A member inherits from the nearest manifest with a [workspace] table.
        workspace = next((_table(d, "workspace") for _, d in manifests if "workspace" in d), {})
        ws_package = _table(workspace, "package")
        ws_deps = _table(workspace, "dependencies")
        package = _table(data, "package") if "package" in data else None
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
                deps.append(_Dep(package_name, spec, src))
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

    def pin(dep: _Dep) -> tuple[str, str] | None:
        versions = locked.get(dep.name)
        if not versions or lock is None:
            return None
        fitting = [v for v in versions if _semver_compatible(dep.spec, v)] or versions
        return fitting[-1], r.rel(lock)

    return found, _frameworks(deps, "rust", pin)


# --- JVM ----------------------------------------------------------------------------------------


def _xml_children(element: ET.Element | None, tag: str) -> list[ET.Element]:
    return [] if element is None else [c for c in element if c.tag == tag]


def _xml_text(element: ET.Element | None, tag: str) -> str | None:
    for child in _xml_children(element, tag):
        return (child.text or "").strip() or None
    return None


def _read_maven(r: _Reader, path: Path, found: _Found) -> list[_Dep]:
    text = r.text(path)
    if text is None:
        return []
    try:
        project = ET.fromstring(text)
    except ET.ParseError as exc:
        log.debug("skipping %s: %s", path, exc)
        return []
    for element in project.iter():
        if isinstance(element.tag, str):
            element.tag = element.tag.rsplit("}", 1)[-1]
    src = r.rel(path)
    props: dict[str, str] = {}
    for properties in _xml_children(project, "properties"):
        props.update({c.tag: (c.text or "").strip() for c in properties})
    parent = next(iter(_xml_children(project, "parent")), None)
    for prefix, owner in (("project.", project), ("project.parent.", parent)):
        for key in ("groupId", "artifactId", "version"):
            value = _xml_text(owner, key)
            if value:
                props.setdefault(prefix + key, value)

    def resolve(value: str | None) -> str | None:
        for _ in range(8):
            if not value or "${" not in value:
                break
            value = re.sub(r"\$\{([^}]+)\}", lambda m: props.get(m.group(1), m.group(0)), value)
        return None if not value or "${" in value else value

    compiler = next(
        (
            plugin
            for plugins in project.iter("plugins")
            for plugin in _xml_children(plugins, "plugin")
            if _xml_text(plugin, "artifactId") == "maven-compiler-plugin"
        ),
        None,
    )
    configuration = next(iter(_xml_children(compiler, "configuration")), None)
    for candidate in (
        props.get("maven.compiler.release"),
        props.get("maven.compiler.source"),
        props.get("java.version"),
        _xml_text(configuration, "release"),
        _xml_text(configuration, "source"),
    ):
        found.version("java", resolve(candidate))
    found.version("kotlin", resolve(props.get("kotlin.version")))

    deps: list[_Dep] = []
    boms: dict[str, str] = {}  # groupId -> version, for dependencies the parent or a BOM manages
    managed: dict[str, str] = {}
    if parent is not None:
        group, artifact = _xml_text(parent, "groupId"), _xml_text(parent, "artifactId")
        version = resolve(_xml_text(parent, "version"))
        if group and artifact:
            deps.append(_Dep(f"{group}:{artifact}", version, src))
            if version:
                boms[group] = version
    for management in _xml_children(project, "dependencyManagement"):
        for dependencies in _xml_children(management, "dependencies"):
            for dep in _xml_children(dependencies, "dependency"):
                group, artifact = _xml_text(dep, "groupId"), _xml_text(dep, "artifactId")
                version = resolve(_xml_text(dep, "version"))
                if group and artifact and version:
                    managed[f"{group}:{artifact}"] = version
                    if _xml_text(dep, "scope") == "import":
                        boms.setdefault(group, version)
    for dependencies in _xml_children(project, "dependencies"):
        for dep in _xml_children(dependencies, "dependency"):
            group, artifact = resolve(_xml_text(dep, "groupId")), _xml_text(dep, "artifactId")
            if not group or not artifact:
                continue
            name = f"{group}:{artifact}"
            version = resolve(_xml_text(dep, "version")) or managed.get(name) or boms.get(group)
            deps.append(_Dep(name, version, src))
    return deps


_GRADLE_CONFIGS = (
    "implementation|api|compileOnly|runtimeOnly|testImplementation|testRuntimeOnly|"
    "testCompileOnly|annotationProcessor|kapt|ksp|developmentOnly|compile|testCompile"
)
_GRADLE_DEP = re.compile(
    rf"\b(?:{_GRADLE_CONFIGS})\b\s*\(?\s*(?:(?:enforcedPlatform|platform)\s*\(\s*)?"
    r"""["']([^"':\s]+):([^"':\s]+)(?::([^"'\s@:]+))?[^"']*["']"""
)
_GRADLE_MAP_DEP = re.compile(
    rf"\b(?:{_GRADLE_CONFIGS})\b\s*\(?\s*group\s*[:=]\s*[\"']([^\"']+)[\"']\s*,\s*"
    r"""name\s*[:=]\s*["']([^"']+)["'](?:\s*,\s*version\s*[:=]\s*["']([^"']+)["'])?"""
)
_GRADLE_JAVA = (
    re.compile(r"JavaLanguageVersion\.of\(\s*[\"']?(\d+)"),
    re.compile(r"jvmToolchain\(\s*(\d+)"),
    re.compile(r"sourceCompatibility\s*=\s*(?:JavaVersion\.VERSION_([\d_]+)|[\"']?([\d.]+))"),
    re.compile(r"jvmTarget(?:\s*=\s*|\.set\(\s*)(?:JvmTarget\.JVM_([\d_]+)|[\"']([\d.]+))"),
    re.compile(r"targetCompatibility\s*=\s*(?:JavaVersion\.VERSION_([\d_]+)|[\"']?([\d.]+))"),
)
_GRADLE_KOTLIN = re.compile(
    r"""(?:kotlin\(\s*"[\w.-]+"\s*\)|id\s*\(?\s*["']org\.jetbrains\.kotlin\.[\w.-]+["']\s*\)?)"""
    r"""\s*version\s*["']([^"']+)["']"""
)
_GRADLE_BOOT = re.compile(
    r"""id\s*\(?\s*["']org\.springframework\.boot["']\s*\)?\s*version\s*["']([^"']+)["']"""
)


def _read_gradle(r: _Reader, path: Path, found: _Found) -> list[_Dep]:
    text = r.text(path)
    if text is None:
        return []
    src = r.rel(path)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)
    text = re.sub(r"(?<![:\"'/])//[^\n]*", "", text)
    for pattern in _GRADLE_JAVA:
        if m := pattern.search(text):
            value = next(g for g in m.groups() if g)
            found.version("java", value.replace("_", "."))
    if m := _GRADLE_KOTLIN.search(text):
        found.version("kotlin", m.group(1))
    props: dict[str, str] = {}
    properties_path = path.parent / "gradle.properties"
    properties = r.text(properties_path) if properties_path.is_file() else None
    for line in (properties or "").splitlines():
        key, sep, value = line.partition("=")
        if sep and not key.strip().startswith("#"):
            props[key.strip()] = value.strip()
    for m in re.finditer(r"""(?:val|var|def)?\s*\b(\w+)\s*=\s*["']([^"'$]+)["']""", text):
        props.setdefault(m.group(1), m.group(2))
    boms: dict[str, str] = {}
    if m := _GRADLE_BOOT.search(text):
        boms["org.springframework.boot"] = m.group(1)

    def resolve(value: str | None) -> str | None:
        if value and "$" in value:
            value = re.sub(r"\$\{?(\w+)\}?", lambda m: props.get(m.group(1), "$"), value)
        return None if not value or "$" in value else value

    matches = sorted(
        [*_GRADLE_DEP.finditer(text), *_GRADLE_MAP_DEP.finditer(text)], key=lambda m: m.start()
    )
    return [
        _Dep(f"{m.group(1)}:{m.group(2)}", resolve(m.group(3)) or boms.get(m.group(1)), src)
        for m in matches
    ]


def _read_jvm(r: _Reader) -> tuple[_Found, list[Framework]]:
    found = _Found()
    path = r.nearest("pom.xml", "build.gradle.kts", "build.gradle")
    if path is None:
        return found, []
    reader = _read_maven if path.name == "pom.xml" else _read_gradle
    return found, _frameworks(reader(r, path, found), "jvm", _no_pin)


# --- CMake (C and C++) --------------------------------------------------------------------------

_CMAKE_STANDARDS = (
    ("c++", r"\bCMAKE_CXX_STANDARD\s+\"?(\d+)"),
    ("c++", r"\bcxx_std_(\d+)"),
    ("c++", r"(?<!_)\bCXX_STANDARD\s+\"?(\d+)"),
    ("c", r"\bCMAKE_C_STANDARD\s+\"?(\d+)"),
    ("c", r"\bc_std_(\d+)"),
    ("c", r"(?<!_)\bC_STANDARD\s+\"?(\d+)"),
)
_VERSION = re.compile(r"v?\d+(?:\.\d+)*")
# find_package names that are build tools, not libraries the code is written against.
_CMAKE_TOOLS = frozenset({"Threads", "PkgConfig", "Git", "Doxygen", "Python", "Python3", "Perl"})


def _read_cmake(r: _Reader) -> tuple[_Found, list[Framework]]:
    found = _Found()
    deps: list[_Dep] = []
    # Subdirectories inherit the standard the top-level CMakeLists.txt sets: read them all.
    for path in r.every("CMakeLists.txt"):
        text = r.text(path)
        if text is None:
            continue
        src = r.rel(path)
        text = re.sub(r"#\[(=*)\[.*?\]\1\]", "", text, flags=re.DOTALL)
        text = re.sub(r"#[^\n]*", "", text)
        for key, pattern in _CMAKE_STANDARDS:
            if m := re.search(pattern, text):
                found.version(key, m.group(1))
        for m in re.finditer(r"find_package\s*\(\s*([\w.+-]+)(?:\s+(\d[\w.]*))?", text):
            if m.group(1) not in _CMAKE_TOOLS:
                deps.append(_Dep(m.group(1), m.group(2), src))
        for m in re.finditer(r"FetchContent_Declare\s*\(\s*([\w.+-]+)([^)]*)\)", text):
            tag = re.search(r"GIT_TAG\s+\"?([\w.+-]+)", m.group(2))
            version = tag.group(1) if tag and _VERSION.fullmatch(tag.group(1)) else None
            deps.append(_Dep(m.group(1), version, src))
    vcpkg = r.nearest("vcpkg.json")
    data = r.json(vcpkg) if vcpkg else None
    if vcpkg and isinstance(data, dict) and isinstance(data.get("dependencies"), list):
        for item in data["dependencies"]:
            if isinstance(item, str):
                deps.append(_Dep(item, None, r.rel(vcpkg)))
            elif isinstance(item, dict) and isinstance(item.get("name"), str):
                deps.append(_Dep(item["name"], item.get("version>="), r.rel(vcpkg)))
    conan = r.nearest("conanfile.txt")
    text = r.text(conan) if conan else None
    if conan and text and (section := re.search(r"^\[requires\]([^\[]*)", text, re.MULTILINE)):
        for line in section.group(1).split():
            name, _, version = line.partition("/")
            deps.append(_Dep(name, version.split("@")[0] or None, r.rel(conan)))
    return found, _frameworks(deps, "cmake", _no_pin)


_READERS: dict[str, Callable[[_Reader], tuple[_Found, list[Framework]]]] = {
    "python": _read_python,
    "node": _read_node,
    "go": _read_go,
    "rust": _read_rust,
    "jvm": _read_jvm,
    "cmake": _read_cmake,
}


def read_manifests(ecosystems: Iterable[str], dirs: Sequence[Path], root: Path) -> ManifestInfo:
    """Versions and frameworks of ``ecosystems``, from manifests in ``dirs`` (nearest first).

    Frameworks are ordered well-known first (by importance), then in manifest order, at most
    ``MAX_FRAMEWORKS``; paths in the result are relative to ``root``.
    """
    reader = _Reader(dirs, root)
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
            rank = _rank(framework.name, ecosystem)
            ranked.append((rank is None, rank or 0, eco_index, position, framework))
    ranked.sort(key=lambda item: item[:4])
    info.frameworks = [item[4] for item in ranked[:MAX_FRAMEWORKS]]
    info.sources = reader.sources
    return info
