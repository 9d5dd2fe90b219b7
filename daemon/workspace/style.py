"""Style and tools for a file: indentation, line length, the workspace's linters and formatters."""

from __future__ import annotations

import json
import logging
import re
import tomllib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from daemon.language import languages_of_tool
from daemon.protocol import Style
from daemon.workspace.manifests import (
    normalize_python_name,
    parse_simple_yaml,
    read_text,
    strip_json_comments,
)

log = logging.getLogger(__name__)

PRETTIER_FILES = (
    ".prettierrc",
    ".prettierrc.json",
    ".prettierrc.json5",
    ".prettierrc.yaml",
    ".prettierrc.yml",
    ".prettierrc.toml",
)
STYLE_FILES = (
    ".editorconfig",
    "ruff.toml",
    ".ruff.toml",
    "pyproject.toml",
    "package.json",
    *PRETTIER_FILES,
    "rustfmt.toml",
    ".rustfmt.toml",
    ".clang-format",
    "_clang-format",
)

_CLANG_LANGUAGES = {
    "c": "Cpp",
    "cpp": "Cpp",
    "cuda-cpp": "Cpp",
    "objective-c": "ObjC",
    "objective-cpp": "ObjC",
    "java": "Java",
    "csharp": "CSharp",
    "proto": "Proto",
}
# (ColumnLimit, IndentWidth) of clang-format's predefined styles; 0 means no limit.
_CLANG_BASES = {
    "llvm": (80, 2),
    "google": (80, 2),
    "chromium": (80, 2),
    "mozilla": (80, 2),
    "webkit": (0, 4),
    "microsoft": (120, 4),
    "gnu": (79, 2),
}


@dataclass
class _Draft:
    """Settings decided so far; a key present with None means "decided: none" (no limit)."""

    values: dict[str, Any] = field(default_factory=dict)

    def fill(
        self,
        indent_style: str | None = None,
        indent_size: Any = None,
        line_length: Any = None,
    ) -> None:
        if indent_style in ("space", "tab"):
            self.values.setdefault("indent_style", indent_style)
        size = _int(indent_size)
        if size is not None and 1 <= size <= 16:
            self.values.setdefault("indent_size", size)
        length = _int(line_length)
        if length is not None:
            # 0 (clang-format) or absurd widths mean "no limit": decided, and nothing to state.
            self.values.setdefault("line_length", length if 20 <= length <= 1000 else None)

    def style(self) -> Style:
        return Style(**{k: v for k, v in self.values.items() if v is not None})


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _nearest(dirs: Sequence[Path], *names: str) -> Path | None:
    for directory in dirs:
        for name in names:
            if (directory / name).is_file():
                return directory / name
    return None


def _toml(path: Path) -> dict[str, Any] | None:
    text = read_text(path)
    if text is None:
        return None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        log.debug("skipping %s: %s", path, exc)
        return None


def _section(data: dict[str, Any] | None, *keys: str) -> dict[str, Any]:
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else {}


# --- .editorconfig ------------------------------------------------------------------------------


class _GlobTranslator:
    """An EditorConfig glob as a regular expression; {n1..n2} ranges are checked after matching."""

    def __init__(self) -> None:
        self.ranges: list[tuple[int, int]] = []

    def translate(self, pattern: str) -> str:
        out: list[str] = []
        i, n = 0, len(pattern)
        while i < n:
            c = pattern[i]
            if c == "\\" and i + 1 < n:
                out.append(re.escape(pattern[i + 1]))
                i += 2
            elif pattern.startswith("**/", i) and (i == 0 or pattern[i - 1] == "/"):
                out.append("(?:.*/)?")  # zero or more directories
                i += 3
            elif pattern.startswith("**", i):
                out.append(".*")
                i += 2
            elif c == "*":
                out.append("[^/]*")
                i += 1
            elif c == "?":
                out.append("[^/]")
                i += 1
            elif c == "[":
                end = pattern.find("]", i + 2)
                body = pattern[i + 1 : end] if end > 0 else ""
                if not body or "/" in body:
                    out.append(re.escape(c))  # no class here: a literal bracket
                    i += 1
                    continue
                negate = body[0] in "!^"
                body = body[1:] if negate else body
                escaped = "".join("\\" + ch if ch in "\\^[]" else ch for ch in body)
                out.append(("[^" if negate else "[") + escaped + "]")
                i = end + 1
            elif c == "{":
                end = self._closing_brace(pattern, i)
                if end < 0:
                    out.append(re.escape(c))
                    i += 1
                    continue
                out.append(self._braces(pattern[i + 1 : end]))
                i = end + 1
            else:
                out.append(re.escape(c))
                i += 1
        return "".join(out)

    @staticmethod
    def _closing_brace(pattern: str, start: int) -> int:
        depth = 0
        i = start
        while i < len(pattern):
            if pattern[i] == "\\":
                i += 2
                continue
            if pattern[i] == "{":
                depth += 1
            elif pattern[i] == "}":
                depth -= 1
                if depth == 0:
                    return i
            i += 1
        return -1

    def _braces(self, inner: str) -> str:
        numbers = re.fullmatch(r"([+-]?\d+)\.\.([+-]?\d+)", inner)
        if numbers:
            self.ranges.append((int(numbers.group(1)), int(numbers.group(2))))
            return rf"(?P<n{len(self.ranges) - 1}>[+-]?\d+)"
        parts, depth, start = [], 0, 0
        for i, ch in enumerate(inner):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "," and depth == 0 and (i == 0 or inner[i - 1] != "\\"):
                parts.append(inner[start:i])
                start = i + 1
        parts.append(inner[start:])
        if len(parts) == 1:
            return re.escape("{") + self.translate(inner) + re.escape("}")  # {a} is literal
        return "(?:" + "|".join(self.translate(p) for p in parts) + ")"


def editorconfig_glob_matches(glob: str, relative_path: str) -> bool:
    """Whether an .editorconfig section glob matches a path relative to that file's directory.

    A glob without a slash matches the file name in any subdirectory; one with a slash matches
    from the .editorconfig's directory. ``**/`` also matches no directory at all.
    """
    translator = _GlobTranslator()
    if "/" in glob:
        regex = translator.translate(glob.removeprefix("/"))
    else:
        regex = "(?:.*/)?" + translator.translate(glob)
    try:
        match = re.fullmatch(regex, relative_path)
    except re.error:
        return False
    if not match:
        return False
    for index, (low, high) in enumerate(translator.ranges):
        value = int(match.group(f"n{index}"))
        if not min(low, high) <= value <= max(low, high):
            return False
    return True


def parse_editorconfig(text: str) -> tuple[bool, list[tuple[str, dict[str, str]]]]:
    """(root, sections in file order as (glob, properties)); keys and values lowercased."""
    root = False
    sections: list[tuple[str, dict[str, str]]] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            sections.append((line[1:-1], {}))
            continue
        key, sep, value = line.partition("=")
        if not sep:
            continue
        key = key.strip().lower()
        value = re.split(r"\s[#;]", value, maxsplit=1)[0].strip()
        if not sections:
            if key == "root":
                root = value.lower() == "true"
        else:
            sections[-1][1][key] = value.lower()
    return root, sections


def editorconfig_properties(file: Path, dirs: Sequence[Path]) -> tuple[dict[str, str], list[Path]]:
    """The properties .editorconfig files in ``dirs`` (nearest first) give ``file``.

    The search stops at a file with ``root = true`` or at the last of ``dirs`` (the workspace
    root: a profile must follow from the workspace alone). Nearer files and later sections win.
    """
    found: list[tuple[Path, list[tuple[str, dict[str, str]]]]] = []
    for directory in dirs:
        path = directory / ".editorconfig"
        text = read_text(path) if path.is_file() else None
        if text is None:
            continue
        is_root, sections = parse_editorconfig(text)
        found.append((path, sections))
        if is_root:
            break
    properties: dict[str, str] = {}
    used: list[Path] = []
    for path, sections in reversed(found):
        try:
            relative = file.relative_to(path.parent).as_posix()
        except ValueError:
            continue
        for glob, props in sections:
            if len(glob) <= 4096 and editorconfig_glob_matches(glob, relative):
                properties.update(props)
                if path not in used:
                    used.append(path)
    return properties, used


def _from_editorconfig(props: dict[str, str], draft: _Draft) -> None:
    style = props.get("indent_style")
    size: str | None = props.get("indent_size")
    tab_width = props.get("tab_width")
    if size == "tab" or (size is None and style == "tab"):
        size = tab_width
    draft.fill(
        indent_style=style if style in ("space", "tab") else None,
        indent_size=size,
        line_length=0 if props.get("max_line_length") == "off" else props.get("max_line_length"),
    )


# --- Formatter configs --------------------------------------------------------------------------


def _python_formatter(dirs: Sequence[Path]) -> tuple[dict[str, Any], dict[str, Any], Path | None]:
    for directory in dirs:
        for name in (".ruff.toml", "ruff.toml", "pyproject.toml"):
            path = directory / name
            data = _toml(path) if path.is_file() else None
            if data is None:
                continue
            ruff = _section(data, "tool", "ruff") if name == "pyproject.toml" else data
            if name == "pyproject.toml" and "ruff" not in _section(data, "tool"):
                black = _section(data, "tool", "black")
                if "black" in _section(data, "tool"):
                    explicit = {"line_length": black.get("line-length")}
                    defaults = {"line_length": 88, "indent_size": 4, "indent_style": "space"}
                    return explicit, defaults, path
                continue
            indent = _section(ruff, "format").get("indent-style")
            explicit = {
                "line_length": ruff.get("line-length"),
                "indent_size": ruff.get("indent-width"),
                "indent_style": indent if indent in ("space", "tab") else None,
            }
            return explicit, {"line_length": 88, "indent_size": 4, "indent_style": "space"}, path
    return {}, {}, None


def _prettier_config(directory: Path) -> tuple[dict[str, Any], Path] | None:
    package = directory / "package.json"
    if package.is_file():
        try:
            data = json.loads(read_text(package) or "null")
        except ValueError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("prettier"), dict):
            return data["prettier"], package
    for name in PRETTIER_FILES:
        path = directory / name
        text = read_text(path) if path.is_file() else None
        if text is None:
            continue
        config: Any = None
        if name.endswith(".toml"):
            config = _toml(path)
        elif not name.endswith((".yaml", ".yml")):
            try:
                config = json.loads(strip_json_comments(text))
            except ValueError:
                config = None
        if config is None and not name.endswith((".json", ".json5", ".toml")):
            config = parse_simple_yaml(text)  # .prettierrc may be YAML too
        if isinstance(config, dict):
            return config, path
        log.debug("skipping %s: not a prettier config", path)
    return None


def _prettier(dirs: Sequence[Path]) -> tuple[dict[str, Any], dict[str, Any], Path | None]:
    for directory in dirs:
        found = _prettier_config(directory)
        if found:
            config, path = found
            use_tabs = config.get("useTabs")
            explicit = {
                "line_length": config.get("printWidth"),
                "indent_size": config.get("tabWidth"),
                "indent_style": None if use_tabs is None else ("tab" if use_tabs else "space"),
            }
            return explicit, {"line_length": 80, "indent_size": 2, "indent_style": "space"}, path
    return {}, {}, None


def _rustfmt(dirs: Sequence[Path]) -> tuple[dict[str, Any], dict[str, Any], Path | None]:
    defaults = {"line_length": 100, "indent_size": 4, "indent_style": "space"}
    path = _nearest(dirs, "rustfmt.toml", ".rustfmt.toml")
    data = _toml(path) if path else None
    if not path or data is None:
        return {}, defaults, None
    hard_tabs = data.get("hard_tabs")
    explicit = {
        "line_length": data.get("max_width"),
        "indent_size": data.get("tab_spaces"),
        "indent_style": None if hard_tabs is None else ("tab" if hard_tabs else "space"),
    }
    return explicit, defaults, path


def _clang_format(
    dirs: Sequence[Path], language: str
) -> tuple[dict[str, Any], dict[str, Any], Path | None]:
    target = _CLANG_LANGUAGES[language]
    path = _nearest(dirs, ".clang-format", "_clang-format")
    text = read_text(path) if path else None
    if not path or text is None:
        return {}, {}, None
    documents = [
        parse_simple_yaml(doc) for doc in re.split(r"^(?:---|\.\.\.)\s*$", text, flags=re.M)
    ]
    default = [d for d in documents if d and "Language" not in d]
    specific = [d for d in documents if str(d.get("Language", "")).lower() == target.lower()]
    if not specific and target != "Cpp":
        return {}, {}, None  # clang-format formats other languages only when told to
    config: dict[str, Any] = {}
    for document in default[:1] + specific[:1]:
        config.update(document)
    base = str(config.get("BasedOnStyle", "llvm")).lower()
    column_limit, indent_width = _CLANG_BASES.get(base, _CLANG_BASES["llvm"])
    if base == "google" and target == "Java":
        column_limit = 100
    use_tab = config.get("UseTab")
    explicit = {
        "line_length": config.get("ColumnLimit"),
        "indent_size": config.get("IndentWidth"),
        "indent_style": None
        if use_tab is None
        else ("space" if str(use_tab).lower() in ("never", "false") else "tab"),
    }
    defaults = {"line_length": column_limit, "indent_size": indent_width, "indent_style": "space"}
    return explicit, defaults, path


def _formatter(
    language: str | None, dirs: Sequence[Path]
) -> tuple[dict[str, Any], dict[str, Any], Path | None]:
    if language in ("python", "pip-requirements"):
        return _python_formatter(dirs)
    if language in languages_of_tool("prettier"):
        return _prettier(dirs)
    if language == "rust":
        return _rustfmt(dirs)
    if language in _CLANG_LANGUAGES:
        return _clang_format(dirs, language)
    return {}, {}, None


# Precedence, per setting: a convention no config can change (gofmt: Go uses tabs); what the
# language's formatter config says explicitly (ruff/black, prettier, rustfmt, clang-format); what
# .editorconfig says for the file; that formatter's defaults when its config exists (rustfmt's
# always: Rust code is rustfmt'd); last, what the file's own text shows.
def resolve_style(
    dirs: Sequence[Path], file: Path | None, language: str | None
) -> tuple[Style, list[Path]]:
    """The style configs say for ``file`` (dirs nearest first), and the config files used.

    Indentation the text shows is not included: see ``infer_indent`` and ``complete_style``.
    """
    draft = _Draft()
    used: list[Path] = []
    if language == "go":
        draft.fill(indent_style="tab")  # gofmt; no config can change it
    try:
        explicit, defaults, path = _formatter(language, dirs)
    except Exception:  # a config we misread must not take the profile down
        log.debug("reading formatter config failed", exc_info=True)
        explicit, defaults, path = {}, {}, None
    if path:
        used.append(path)
    draft.fill(**explicit)
    if file is not None:
        props, files = editorconfig_properties(file, dirs)
        _from_editorconfig(props, draft)
        used = files + used
    draft.fill(**defaults)
    return draft.style(), used


# --- Indentation from the text ------------------------------------------------------------------


def infer_indent(text: str, max_lines: int = 5000) -> tuple[str | None, int | None]:
    """(indent style, indent size) the text itself uses; size is the most common indent step."""
    tabs = spaces = 0
    steps: Counter[int] = Counter()
    previous = 0
    for line in text.splitlines()[:max_lines]:
        body = line.lstrip(" \t")
        if not body:
            continue
        lead = line[: len(line) - len(body)]
        if lead.startswith("\t"):
            tabs += 1
            continue
        if "\t" in lead or body.startswith("*"):
            continue  # mixed indentation, or a block comment's " * " continuation
        if lead:
            spaces += 1
        step = len(lead) - previous
        if 0 < step <= 8:
            steps[step] += 1
        previous = len(lead)
    if tabs > spaces:
        return "tab", None
    if not spaces:
        return None, None
    size = min(steps, key=lambda s: (-steps[s], s)) if steps else None
    return "space", size


def complete_style(style: Style, text: str | None) -> Style:
    """``style`` with the indentation the text shows, where no config decided it."""
    if not text or (style.indent_style and (style.indent_size or style.indent_style == "tab")):
        return style
    indent_style, indent_size = infer_indent(text)
    draft = _Draft({k: v for k, v in style.model_dump().items() if v is not None})
    draft.fill(indent_style=indent_style)
    if draft.values.get("indent_style") == indent_style:
        draft.fill(indent_size=indent_size)
    return draft.style()


# --- Linters and formatters the workspace configures --------------------------------------------

_JS_EXTENSIONS = ("js", "cjs", "mjs", "ts", "cts", "mts")
_ESLINT_FILES = (
    ".eslintrc",
    *(f".eslintrc.{ext}" for ext in ("js", "cjs", "json", "yaml", "yml")),
    *(f"eslint.config.{ext}" for ext in _JS_EXTENSIONS),
)
_PRETTIER_SCRIPT_FILES = (
    *(f".prettierrc.{ext}" for ext in _JS_EXTENSIONS),
    *(f"prettier.config.{ext}" for ext in _JS_EXTENSIONS),
)
# Files whose presence alone says a tool is in use (beyond STYLE_FILES, read for settings).
TOOL_FILES = (*_ESLINT_FILES, *_PRETTIER_SCRIPT_FILES, "go.work", "Pipfile")

_REQUIREMENT_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _python_dependencies(directory: Path) -> dict[str, Path]:
    """The Python packages a directory's manifests ask for, dev groups included, each with the
    first file that names it."""
    names: dict[str, Path] = {}

    def add(name: Any, path: Path) -> None:
        match = _REQUIREMENT_NAME.match(name) if isinstance(name, str) else None
        if match:
            names.setdefault(normalize_python_name(match.group(1)), path)

    pyproject = directory / "pyproject.toml"
    data = _toml(pyproject) if pyproject.is_file() else None
    if data:
        project = _section(data, "project")
        lists: list[Any] = [project.get("dependencies")]
        lists += list(_section(project, "optional-dependencies").values())
        lists += list(_section(data, "dependency-groups").values())
        lists.append(_section(data, "tool", "uv").get("dev-dependencies"))
        lists += list(_section(data, "tool", "pdm", "dev-dependencies").values())
        for entries in lists:
            for item in entries if isinstance(entries, list) else []:
                add(item, pyproject)
        poetry = _section(data, "tool", "poetry")
        tables = [_section(poetry, "dependencies"), _section(poetry, "dev-dependencies")]
        tables += [_section(group, "dependencies") for group in _section(poetry, "group").values()]
        for table in tables:
            for name in table:
                add(name, pyproject)
    for path in sorted(directory.glob("requirements*.txt")):
        text = read_text(path) if path.is_file() else None
        for line in (text or "").splitlines():
            if not line.lstrip().startswith(("#", "-")):  # comments, options, --hash lines
                add(line, path)
    pipfile = directory / "Pipfile"
    data = _toml(pipfile) if pipfile.is_file() else None
    if data:
        for section in ("packages", "dev-packages"):
            for name in _section(data, section):
                add(name, pipfile)
    return names


def _package_json(directory: Path) -> dict[str, Any]:
    path = directory / "package.json"
    if not path.is_file():
        return {}
    try:
        data = json.loads(read_text(path) or "null")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _node_dependency_names(package: dict[str, Any]) -> set[str]:
    names: set[str] = set()
    for section in ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies"):
        names.update(_section(package, section))
    return names


def _tools_in(directory: Path, found: dict[str, Path]) -> None:
    """Add each tool ``directory`` configures to ``found`` (tool -> the file that says so)."""

    def first(tool: str, *names: str) -> None:
        for name in names:
            if tool not in found and (directory / name).is_file():
                found[tool] = directory / name

    first("ruff", "ruff.toml", ".ruff.toml")
    pyproject = directory / "pyproject.toml"
    tool_tables = _section(_toml(pyproject), "tool") if pyproject.is_file() else {}
    for tool in ("ruff", "black"):
        if tool in tool_tables:
            found.setdefault(tool, pyproject)
    if "ruff" not in found or "black" not in found:
        dependencies = _python_dependencies(directory)
        for tool in ("ruff", "black"):
            if tool in dependencies:
                found.setdefault(tool, dependencies[tool])
    first("prettier", *PRETTIER_FILES, *_PRETTIER_SCRIPT_FILES)
    first("eslint", *_ESLINT_FILES)
    package = _package_json(directory)
    if package:
        node_dependencies = _node_dependency_names(package)
        for tool, key in (("prettier", "prettier"), ("eslint", "eslintConfig")):
            if key in package or tool in node_dependencies:
                found.setdefault(tool, directory / "package.json")
    first("rustfmt", "rustfmt.toml", ".rustfmt.toml")
    first("clang-format", ".clang-format", "_clang-format")
    first("gofmt", "go.mod", "go.work")


# Tools (ruff, black, prettier, eslint, rustfmt, clang-format, gofmt) are those whose config file
# or dependency the workspace has, kept only for the languages each tool works on.
def detect_tools(dirs: Sequence[Path], language: str | None) -> tuple[list[str], list[Path]]:
    """The linters and formatters the workspace configures for ``language`` (sorted), and the
    files that say so; every tool found when the language is unknown.

    ``dirs`` run from the file's directory up to the workspace root: a tool configured at any
    level counts, as a monorepo's root config applies to its packages. Go code is gofmt'd
    whether or not a go.mod says so.
    """
    found: dict[str, Path] = {}
    for directory in dirs:
        try:
            _tools_in(directory, found)
        except Exception:  # a config we misread must not take the profile down
            log.debug("detecting tools in %s failed", directory, exc_info=True)
    if language is not None:
        found = {t: p for t, p in found.items() if language in languages_of_tool(t)}
        # clang-format formats Java, C#, proto... only where its config has a section for them.
        if "clang-format" in found and _clang_format(dirs, language)[2] is None:
            del found["clang-format"]
    tools = sorted(found)
    if language == "go" and "gofmt" not in tools:
        tools = sorted([*tools, "gofmt"])
    files: list[Path] = []
    for tool in tools:
        if tool in found and found[tool] not in files:
            files.append(found[tool])
    return tools, files
