"""Go: the go and toolchain versions and the direct requirements of go.mod."""

from __future__ import annotations

import re

from daemon.protocol import Framework
from daemon.workspace.manifests.frameworks import no_pin, pin_frameworks
from daemon.workspace.manifests.reader import Dep, Found, Reader


def read_go(r: Reader) -> tuple[Found, list[Framework]]:
    found = Found()
    path = r.nearest("go.mod")
    text = r.text(path) if path else None
    if not path or text is None:
        return found, []
    src = r.rel(path)
    deps: list[Dep] = []
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
                deps.append(Dep(words[0].strip('"'), words[1], src))
            continue
        if re.fullmatch(r"\w+\s*\(", code.strip()):
            block = code.strip().rstrip("(").strip()
        elif words[0] == "go" and len(words) > 1:
            found.version("go", words[1])
        elif words[0] == "toolchain" and len(words) > 1:
            found.version("go-toolchain", words[1].removeprefix("go"))
        elif words[0] == "require" and len(words) >= 3 and "indirect" not in comment:
            deps.append(Dep(words[1].strip('"'), words[2], src))
    return found, pin_frameworks(deps, "go", no_pin)
