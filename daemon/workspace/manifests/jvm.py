"""JVM: Java and Kotlin versions and dependencies from Maven or Gradle build files.
Versions a parent, a BOM or a property supplies are followed.
"""

from __future__ import annotations

import logging
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from daemon.protocol import Framework
from daemon.workspace.manifests.frameworks import no_pin, pin_frameworks
from daemon.workspace.manifests.reader import Dep, Found, Reader

log = logging.getLogger(__name__)


def _xml_children(element: ET.Element | None, tag: str) -> list[ET.Element]:
    return [] if element is None else [c for c in element if c.tag == tag]


def _xml_text(element: ET.Element | None, tag: str) -> str | None:
    for child in _xml_children(element, tag):
        return (child.text or "").strip() or None
    return None


def read_maven(r: Reader, path: Path, found: Found) -> list[Dep]:
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

    deps: list[Dep] = []
    boms: dict[str, str] = {}  # groupId -> version, for dependencies the parent or a BOM manages
    managed: dict[str, str] = {}
    if parent is not None:
        group, artifact = _xml_text(parent, "groupId"), _xml_text(parent, "artifactId")
        version = resolve(_xml_text(parent, "version"))
        if group and artifact:
            deps.append(Dep(f"{group}:{artifact}", version, src))
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
            deps.append(Dep(name, version, src))
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


def read_gradle(r: Reader, path: Path, found: Found) -> list[Dep]:
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
        Dep(f"{m.group(1)}:{m.group(2)}", resolve(m.group(3)) or boms.get(m.group(1)), src)
        for m in matches
    ]


def read_jvm(r: Reader) -> tuple[Found, list[Framework]]:
    found = Found()
    path = r.nearest("pom.xml", "build.gradle.kts", "build.gradle")
    if path is None:
        return found, []
    reader = read_maven if path.name == "pom.xml" else read_gradle
    return found, pin_frameworks(reader(r, path, found), "jvm", no_pin)
