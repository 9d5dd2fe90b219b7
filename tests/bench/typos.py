"""A corpus of real code with one real typo each: what `assist fix` is measured on.

The files are code no one here wrote: functions of Python's standard library, JavaScript and
TypeScript modules of the npm packages the Makefile installs (code-server's ``node_modules``),
Java classes of the JDK's own sources (``src.zip``), and C files of those npm packages' native
parts. Each gets one typo of a kind programmers make (a colon, bracket, brace, comma, semicolon
or closing quote lost; a line indented two spaces too far; ``=`` for ``==``; a keyword with two
letters swapped; ``=>`` written ``=``; a closer doubled; a dot lost), and is kept only when the
language's own checker accepts the original and rejects the typo: Python's compiler,
``node --check``, the TypeScript compiler's syntax pass, ``javac`` stopped after parsing,
``gcc -fsyntax-only``. The choice is seeded (``SEED``), so the same machine makes the same
corpus.

Run: .venv/bin/python tests/bench/typos.py DIR [--per-language 64]
writes DIR/broken/<language>/<case>, DIR/fixed/<language>/<case> and DIR/cases.jsonl (the
case's language, kind, source file and the edit); ``bench_fix.py --corpus DIR`` measures it.
"""

from __future__ import annotations

import argparse
import ast
import glob
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from daemon.checks.keywords import KEYWORDS
from daemon.lexer import Token
from daemon.repair.scan import scan

SEED = 32
EXTENSIONS = {"python": ".py", "javascript": ".js", "typescript": ".ts", "java": ".java", "c": ".c"}
SIZE = (600, 12_000)  # characters of a source file kept
LONGEST_LINE = 160  # minified or generated files are not what people type
NODE_MODULES = sorted(glob.glob(str(Path.home() / ".cache/assist/code-server-*/node_modules")))
JDK_SOURCES = sorted(p for p in glob.glob("/usr/lib/jvm/*/lib/src.zip") if os.path.isfile(p))
CHECK_TIMEOUT_S = 30


@dataclass(frozen=True)
class Edit:
    """Replace ``length`` characters at ``offset`` with ``text``."""

    offset: int
    length: int
    text: str

    def apply(self, source: str) -> str:
        return source[: self.offset] + self.text + source[self.offset + self.length :]


@dataclass(frozen=True)
class Case:
    name: str
    language: str
    kind: str
    source: str  # where the original came from
    sha256: str  # of the original text
    edit: Edit


# --- the typos ------------------------------------------------------------------------------


def _offsets(text: str) -> list[int]:
    starts = [0]
    for line in text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    return starts


def _at(starts: list[int], token: Token) -> int:
    return starts[token.line] + token.column


def _lose(char: str) -> Callable[[str, str, list[Token]], Iterator[Edit]]:
    def edits(language: str, text: str, tokens: list[Token]) -> Iterator[Edit]:
        starts = _offsets(text)
        for token in tokens:
            if token.kind == "punct" and token.text == char:
                yield Edit(_at(starts, token), 1, "")

    return edits


def _doubled_closer(language: str, text: str, tokens: list[Token]) -> Iterator[Edit]:
    starts = _offsets(text)
    for token in tokens:
        if token.kind == "punct" and token.text in ")]":
            yield Edit(_at(starts, token), 0, token.text)


def _lost_quote(language: str, text: str, tokens: list[Token]) -> Iterator[Edit]:
    """The closing quote of a one-line string (one quote of a closing triple quote)."""
    starts = _offsets(text)
    for token in tokens:
        body = token.text
        if token.kind != "string" or "\n" in body or len(body) < 3 or body[0] not in "'\"`":
            continue
        if body[-1] == body[0] and body[-2] != "\\":
            yield Edit(_at(starts, token) + len(body) - 1, 1, "")


def _lost_equals(language: str, text: str, tokens: list[Token]) -> Iterator[Edit]:
    """``==`` in a condition written ``=``."""
    starts = _offsets(text)
    lines = text.split("\n")
    for token in tokens:
        stripped = lines[token.line].lstrip().lstrip("} ")
        if token.text in ("==", "===") and stripped.startswith(("if", "while", "elif")):
            yield Edit(_at(starts, token), 2 if token.text == "==" else 3, "=")


def _lost_arrow(language: str, text: str, tokens: list[Token]) -> Iterator[Edit]:
    starts = _offsets(text)
    for token in tokens:
        if token.text == "=>":
            yield Edit(_at(starts, token), 2, "=")


def _swapped_keyword(language: str, text: str, tokens: list[Token]) -> Iterator[Edit]:
    """A keyword at a statement's start with two neighbouring letters swapped."""
    starts = _offsets(text)
    lines = text.split("\n")
    keywords = KEYWORDS[language]
    for token in tokens:
        word = token.text
        first = lines[token.line][: token.column].strip() in ("", "}")
        if token.kind == "word" and word in keywords and len(word) >= 4 and first:
            for i in range(1, len(word) - 1):
                if word[i] != word[i + 1]:
                    swapped = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
                    yield Edit(_at(starts, token), len(word), swapped)


def _indented(language: str, text: str, tokens: list[Token]) -> Iterator[Edit]:
    """A line of a block indented two spaces too far (Python, where it is an error)."""
    starts = _offsets(text)
    lines = text.split("\n")
    for index in range(1, len(lines)):
        line = lines[index]
        if line.strip() and not line.lstrip().startswith("#") and line.startswith(" "):
            yield Edit(starts[index], 0, "  ")


def _lost_dot(language: str, text: str, tokens: list[Token]) -> Iterator[Edit]:
    """``a.b`` written ``a b`` (a member access whose dot was lost)."""
    starts = _offsets(text)
    for before, token, after in zip(tokens, tokens[1:], tokens[2:], strict=False):
        same_line = before.line == token.line == after.line
        if token.text == "." and before.kind == after.kind == "word" and same_line:
            yield Edit(_at(starts, token), 1, " ")


KINDS: dict[str, Callable[[str, str, list[Token]], Iterator[Edit]]] = {
    "lost colon": _lose(":"),
    "lost )": _lose(")"),
    "lost ]": _lose("]"),
    "lost }": _lose("}"),
    "lost (": _lose("("),
    "lost comma": _lose(","),
    "lost semicolon": _lose(";"),
    "lost closing quote": _lost_quote,
    "= for ==": _lost_equals,
    "swapped keyword letters": _swapped_keyword,
    "=> written =": _lost_arrow,
    "doubled closer": _doubled_closer,
    "lost dot": _lost_dot,
    "indented two too far": _indented,
}
# The kinds that are not a typo in a language, or never an error there.
NOT_FOR = {
    "python": {"lost semicolon", "=> written ="},
    "javascript": {"indented two too far"},
    "typescript": {"indented two too far"},
    "java": {"indented two too far", "=> written ="},
    "c": {"indented two too far", "=> written ="},
}


# --- the languages' own checkers --------------------------------------------------------------

_TS_CHECK = """
const ts = require(process.argv[1]);
let text = ""; process.stdin.on("data", d => text += d);
process.stdin.on("end", () => {
  const out = ts.transpileModule(text, {reportDiagnostics: true, fileName: "case.ts"});
  process.exit(out.diagnostics.length ? 1 : 0);
});
"""


def _typescript() -> str | None:
    """The TypeScript compiler: the VS Code extension's build's, else code-server's."""
    places = [Path(__file__).resolve().parents[2] / "editors/vscode/node_modules"]
    places += [
        Path(root) / "code-server/lib/vscode/extensions/node_modules" for root in NODE_MODULES
    ]
    found = [p / "typescript/lib/typescript.js" for p in places]
    return next((str(p) for p in found if p.exists()), None)


def rejects(language: str, text: str, origin: str) -> bool:
    """Whether the language's own checker rejects ``text`` (``origin``: the file it came from,
    whose folder C's includes are found in)."""
    with tempfile.TemporaryDirectory(prefix="assist-typos-") as folder:
        path = os.path.join(folder, "Case" + EXTENSIONS[language])
        if language == "python":
            try:
                compile(text, "case.py", "exec", dont_inherit=True)
                return False
            except (SyntaxError, ValueError):
                return True
        Path(path).write_text(text, encoding="utf-8")
        if language == "javascript":
            command = ["node", "--check", path]
        elif language == "typescript":
            command = ["node", "-e", _TS_CHECK, str(_typescript())]
        elif language == "java":
            stop = ["-XDshould-stop.ifError=PARSE", "-XDshould-stop.ifNoError=PARSE"]
            command = ["javac", *stop, "-d", folder, path]
        else:
            include = os.path.dirname(origin)
            python = sysconfig.get_paths()["include"]
            command = ["gcc", "-fsyntax-only", "-w", f"-I{include}", f"-I{include}/../include"]
            command.append(f"-I{python}")
            command.append(path)
        stdin = text if language == "typescript" else None
        done = subprocess.run(
            command, input=stdin, capture_output=True, text=True, timeout=CHECK_TIMEOUT_S
        )
        return done.returncode != 0


def checkers() -> dict[str, bool]:
    """Which languages' checkers (and sources) this machine has."""
    return {
        "python": True,
        "javascript": shutil.which("node") is not None and bool(NODE_MODULES),
        "typescript": shutil.which("node") is not None and _typescript() is not None,
        "java": shutil.which("javac") is not None and bool(JDK_SOURCES),
        "c": shutil.which("gcc") is not None and bool(NODE_MODULES),
    }


# --- the real code ----------------------------------------------------------------------------


def _typed_by_people(text: str) -> bool:
    lines = text.split("\n")
    return SIZE[0] <= len(text) <= SIZE[1] and max(map(len, lines)) <= LONGEST_LINE


def python_sources() -> Iterator[tuple[str, str]]:
    """Top-level functions and classes of the standard library, 12 to 120 lines each."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for path in sorted(stdlib.glob("*.py")):
        try:
            text = path.read_text(encoding="utf-8")
            tree = ast.parse(text)
        except (UnicodeDecodeError, SyntaxError):
            continue
        lines = text.split("\n")
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.end_lineno:
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
                if 12 <= node.end_lineno - first <= 120:
                    yield f"{path.name}:{node.name}", "\n".join(lines[first : node.end_lineno])


def npm_sources(extension: str) -> Iterator[tuple[str, str]]:
    for root in NODE_MODULES:
        paths = sorted(glob.glob(f"{root}/**/*{extension}", recursive=True))
        for name in paths:
            if name.endswith((".d.ts", ".min.js")) or "/test" in name:
                continue
            try:
                text = Path(name).read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            yield name, text


def c_sources() -> Iterator[tuple[str, str]]:
    """C files of installed Python packages, Debian's documented examples and npm packages."""
    roots = [sysconfig.get_paths()["purelib"], "/usr/share/doc", *NODE_MODULES]
    for root in roots:
        for name in sorted(glob.glob(f"{root}/**/*.c", recursive=True)):
            try:
                yield name, Path(name).read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue


def java_sources() -> Iterator[tuple[str, str]]:
    with zipfile.ZipFile(JDK_SOURCES[0]) as archive:
        for name in sorted(archive.namelist()):
            if name.startswith("java.base/java/") and name.endswith(".java"):
                yield name, archive.read(name).decode("utf-8", errors="replace")


def sources(language: str) -> Iterator[tuple[str, str]]:
    found: Iterator[tuple[str, str]]
    if language == "python":
        found = python_sources()
    elif language == "java":
        found = java_sources()
    elif language == "c":
        found = c_sources()
    else:
        found = npm_sources(EXTENSIONS[language])
    for origin, text in found:
        if _typed_by_people(text.rstrip("\n") + "\n"):
            yield origin, text.rstrip("\n") + "\n"


# --- the corpus -------------------------------------------------------------------------------


def generate(language: str, count: int, seed: int = SEED) -> Iterator[tuple[Case, str, str]]:
    """``count`` cases of ``language``: (case, original, broken), kinds taken in turn."""
    rng = random.Random(f"{seed}:{language}")
    files = list(sources(language))
    rng.shuffle(files)
    kinds = [k for k in KINDS if k not in NOT_FOR.get(language, set())]
    made = 0
    turn = 0
    for origin, text in files:
        if made >= count:
            return
        if rejects(language, text, origin):
            continue  # the original must be valid
        tokens, _ = scan(language, text)
        for _ in range(len(kinds)):  # this file, the next kind that applies
            kind = kinds[turn % len(kinds)]
            turn += 1
            edits = list(KINDS[kind](language, text, tokens))
            rng.shuffle(edits)
            edit = next((e for e in edits[:6] if rejects(language, e.apply(text), origin)), None)
            if edit is not None:
                digest = hashlib.sha256(text.encode()).hexdigest()
                slug = kind.translate(_SLUG).replace(" ", "_")
                name = "".join(c for c in f"{made:03d}_{slug}" if c.isalnum() or c == "_")
                yield Case(name, language, kind, origin, digest, edit), text, edit.apply(text)
                made += 1
                break


_SLUG = str.maketrans({")": "rparen", "]": "rbracket", "}": "rbrace", "(": "lparen", "=": "eq"})


def write_corpus(folder: Path, per_language: int) -> list[Case]:
    cases: list[Case] = []
    for language, available in checkers().items():
        if not available:
            print(f"{language}: no checker or no sources on this machine; skipped")
            continue
        ext = EXTENSIONS[language]
        for case, original, broken in generate(language, per_language):
            for part, text in (("broken", broken), ("fixed", original)):
                path = folder / part / language / (case.name + ext)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
            cases.append(case)
        print(f"{language}: {sum(c.language == language for c in cases)} cases", flush=True)
    with (folder / "cases.jsonl").open("w") as out:
        for case in cases:
            out.write(json.dumps(asdict(case)) + "\n")
    return cases


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--per-language", type=int, default=64)
    args = parser.parse_args()
    cases = write_corpus(args.folder, args.per_language)
    print(f"{len(cases)} cases in {args.folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
