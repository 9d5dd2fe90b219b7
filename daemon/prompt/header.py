"""The profile header: what the workspace says about the code, as comments atop every prompt.
Language and version, toolchain, pinned dependencies, style and the path: the model never guesses.
"""

from __future__ import annotations

from daemon.language import language_info
from daemon.protocol import WorkspaceProfile


def render_header(profile: WorkspaceProfile | None, language: str | None, path: str | None) -> str:
    """The profile as a few comment lines in the file's own language, or '' when it has none."""
    info = language_info(language)
    if info is None:
        return ""
    facts: list[str] = []
    versions = dict(profile.versions) if profile else {}
    lang_line = info.name
    own_version = _own_version(info.ecosystem, versions)
    if own_version:
        lang_line += f" {own_version}"
    facts.append(f"Language: {lang_line}")
    other = [f"{_VERSION_LABELS.get(k, k)} {v}" for k, v in versions.items() if v != own_version]
    if other:
        facts.append("Toolchain: " + ", ".join(other[:6]))
    if profile and profile.frameworks:
        shown = [f"{f.name} {f.version}" if f.version else f.name for f in profile.frameworks[:8]]
        facts.append("Dependencies: " + ", ".join(shown))
    if profile:
        style = _style_line(profile)
        if style:
            facts.append(f"Style: {style}")
    if path:
        facts.append(f"File: {path}")
    return "".join(_comment(info.line_comment, info.block_comment, fact) for fact in facts)


_VERSION_LABELS = {
    "python": "Python",
    "node": "Node.js",
    "typescript": "TypeScript",
    "ts-target": "compile target",
    "go": "Go",
    "go-toolchain": "Go toolchain",
    "rust": "Rust",
    "rust-edition": "Rust edition",
    "rust-toolchain": "Rust toolchain",
    "java": "Java",
    "kotlin": "Kotlin",
    "c++": "C++",
    "c": "C",
}
_OWN_VERSION_KEY = {"python": "python", "go": "go", "rust": "rust-edition", "jvm": "java"}


def _own_version(ecosystem: str | None, versions: dict[str, str]) -> str | None:
    key = _OWN_VERSION_KEY.get(ecosystem or "")
    if key and key in versions:
        return versions[key]
    return None


def _style_line(profile: WorkspaceProfile) -> str:
    style = profile.style
    parts: list[str] = []
    if style.indent_style == "tab":
        parts.append("tab indentation")
    elif style.indent_style == "space" or style.indent_size:
        parts.append(f"{style.indent_size or 4}-space indentation")
    if style.line_length:
        parts.append(f"lines up to {style.line_length} characters")
    return ", ".join(parts)


def _comment(line: str | None, block: tuple[str, str] | None, fact: str) -> str:
    if line:
        return f"{line} {fact}\n"
    if block:
        return f"{block[0]} {fact} {block[1]}\n"
    return ""
