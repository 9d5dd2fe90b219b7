"""CMake (C and C++): standards and packages from CMakeLists.txt, vcpkg.json, conanfile.txt."""

from __future__ import annotations

import re

from daemon.protocol import Framework
from daemon.workspace.manifests.frameworks import no_pin, pin_frameworks
from daemon.workspace.manifests.reader import Dep, Found, Reader

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


def read_cmake(r: Reader) -> tuple[Found, list[Framework]]:
    found = Found()
    deps: list[Dep] = []
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
                deps.append(Dep(m.group(1), m.group(2), src))
        for m in re.finditer(r"FetchContent_Declare\s*\(\s*([\w.+-]+)([^)]*)\)", text):
            tag = re.search(r"GIT_TAG\s+\"?([\w.+-]+)", m.group(2))
            version = tag.group(1) if tag and _VERSION.fullmatch(tag.group(1)) else None
            deps.append(Dep(m.group(1), version, src))
    vcpkg = r.nearest("vcpkg.json")
    data = r.json(vcpkg) if vcpkg else None
    if vcpkg and isinstance(data, dict) and isinstance(data.get("dependencies"), list):
        for item in data["dependencies"]:
            if isinstance(item, str):
                deps.append(Dep(item, None, r.rel(vcpkg)))
            elif isinstance(item, dict) and isinstance(item.get("name"), str):
                deps.append(Dep(item["name"], item.get("version>="), r.rel(vcpkg)))
    conan = r.nearest("conanfile.txt")
    text = r.text(conan) if conan else None
    if conan and text and (section := re.search(r"^\[requires\]([^\[]*)", text, re.MULTILINE)):
        for line in section.group(1).split():
            name, _, version = line.partition("/")
            deps.append(Dep(name, version.split("@")[0] or None, r.rel(conan)))
    return found, pin_frameworks(deps, "cmake", no_pin)
