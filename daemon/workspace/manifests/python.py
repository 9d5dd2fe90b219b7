"""Python: requires-python and dependencies, pinned by the project's lockfile.
pyproject.toml, requirements*.txt, Pipfile; uv, poetry, pdm and Pipfile locks; .python-version.
"""

from __future__ import annotations

import re
from typing import Any

from daemon.protocol import Framework
from daemon.workspace.manifests.formats import table_at
from daemon.workspace.manifests.frameworks import pin_frameworks, version_or_range
from daemon.workspace.manifests.reader import MAX_LOCK_BYTES, Dep, Found, Reader


def normalize_python_name(name: str) -> str:
    """PEP 503: lowercase, runs of -_. become one -."""
    return re.sub(r"[-_.]+", "-", name).lower()


_PEP508 = re.compile(r"\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?:\[[^\]]*\])?\s*(.*)")


def _pep508(requirement: str, source: str) -> Dep | None:
    match = _PEP508.fullmatch(requirement.split(";", 1)[0])
    if not match:
        return None
    spec = match.group(2).strip()
    if spec.startswith("@"):
        spec = ""  # a URL or path requirement pins no version we can name
    spec = spec.strip("()").strip()
    return Dep(normalize_python_name(match.group(1)), spec or None, source)


def _poetry_spec(value: Any) -> str | None:
    if isinstance(value, list):
        value = value[0] if value else None
    if isinstance(value, dict):
        value = value.get("version")
    return str(value) if isinstance(value, str) else None


def _python(r: Reader, found: Found) -> list[Dep]:
    deps: list[Dep] = []
    pyproject = r.nearest("pyproject.toml")
    data = r.toml(pyproject) if pyproject else None
    poetry_python = None
    if pyproject and data:
        src = r.rel(pyproject)
        project = table_at(data, "project")
        found.version("python", project.get("requires-python"))
        groups: list[Any] = [project.get("dependencies")]
        optional = project.get("optional-dependencies")
        if isinstance(optional, dict):
            groups += list(optional.values())
        dependency_groups = data.get("dependency-groups")
        if isinstance(dependency_groups, dict):
            groups += list(dependency_groups.values())
        groups.append(table_at(data, "tool", "uv").get("dev-dependencies"))
        for group in groups:
            for item in group if isinstance(group, list) else []:
                if isinstance(item, str) and (dep := _pep508(item, src)):
                    deps.append(dep)
        poetry = table_at(data, "tool", "poetry")
        tables = [table_at(poetry, "dependencies"), table_at(poetry, "dev-dependencies")]
        tables += [table_at(group, "dependencies") for group in table_at(poetry, "group").values()]
        for table in tables:
            for name, value in table.items():
                if name.lower() == "python":
                    poetry_python = _poetry_spec(value)
                else:
                    deps.append(Dep(normalize_python_name(name), _poetry_spec(value), src))
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
        requires = table_at(data, "requires")
        found.version("python", requires.get("python_version"))
        found.version("python", requires.get("python_full_version"))
        for table in (table_at(data, "packages"), table_at(data, "dev-packages")):
            for name, value in table.items():
                deps.append(Dep(normalize_python_name(name), _poetry_spec(value), src))
    found.version("python", poetry_python)
    return deps


def _requirements(text: str, source: str) -> list[Dep]:
    deps = []
    for line in text.replace("\\\n", " ").splitlines():
        line = re.split(r"(?:^|\s)#", line, maxsplit=1)[0].strip()
        if not line or line.startswith("-") or "://" in line.split("@")[0]:
            continue
        line = re.sub(r"\s--\S+.*$", "", line)  # --hash=... options after a requirement
        if dep := _pep508(line, source):
            deps.append(dep)
    return deps


def _python_pins(r: Reader) -> dict[str, tuple[str, str]]:
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
                    version_or_range(entry.get("version")) if isinstance(entry, dict) else None
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


def read_python(r: Reader) -> tuple[Found, list[Framework]]:
    found = Found()
    deps = _python(r, found)
    pins = _python_pins(r) if deps else {}
    return found, pin_frameworks(deps, "python", lambda d: pins.get(d.name))
