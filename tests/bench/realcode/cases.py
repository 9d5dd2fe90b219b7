"""The real-repository completion set: lines of multi-file packages installed in the venv.

Each case is one line of a module of an installed package, at one of three cursor kinds, the
way a programmer meets them while typing:

- ``mid``: inside a line, the rest of the line removed (the cursor after at least one typed
  character of the line's code, at least three characters before its end);
- ``newline``: at the start of a new line inside a block: the line's code removed, its
  indentation left (as an editor indents a new line), the cursor after it;
- ``bracket``: right after an opening bracket, the rest of the line removed.

Everything else of the file stays as it is. The expected completion is what the author wrote
after the cursor on that line. Lines are drawn with a fixed seed, evenly over packages and kinds,
from code lines only (no blank or comment-only line, no line of a string or docstring). The
cases are kept in ``cases.jsonl`` beside this module with the sha256 of each file, so runs
compare; where another release of a package is installed, the drawn one is fetched from the
package registry. ``python -m tests.bench.realcode.cases`` draws them again.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import importlib.util
import io
import json
import random
import shutil
import subprocess
import sys
import tempfile
import tokenize
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path

CASES_FILE = Path(__file__).with_name("cases.jsonl")
PACKAGES = ("rich", "starlette", "anyio", "sqlite_utils", "uvicorn", "watchdog")
KINDS = ("mid", "newline", "bracket")
SEED = 31
PER_KIND = 102  # cases of each kind, spread evenly over the packages
MIN_REST = 3  # characters the completion has to write at least
OPENERS = "([{"
# Where a package's drawn release is kept when another one is installed.
DRAWN_COPIES = Path.home() / ".cache" / "assist" / "bench-packages"
# Distribution names that are not the import name.
DISTRIBUTIONS = {"sqlite_utils": "sqlite-utils"}


@dataclass(frozen=True)
class RealCase:
    """One cursor in one file of an installed package, and what its author wrote there."""

    package: str
    version: str
    path: str  # relative to the package's directory
    sha256: str  # of the file as it was drawn
    kind: str
    line: int  # 0-based
    column: int  # code points
    expected: str  # the rest of the line after the cursor, as the author wrote it

    @property
    def id(self) -> str:
        return f"{self.package}/{self.path}:{self.line + 1}:{self.column + 1}:{self.kind}"


@dataclass(frozen=True)
class Document:
    """A case's document: the file with the line's rest removed, the cursor in it."""

    case: RealCase
    root: Path  # the directory the package lives in (its imports resolve against it)
    file: Path  # the module, as installed
    text: str

    @property
    def before(self) -> str:
        # The cursor's line ends at the cursor in the document.
        return "\n".join(self.text.split("\n")[: self.case.line + 1])

    @property
    def after(self) -> str:
        return self.text[len(self.before) :]


def package_dir(package: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{package} is not an installed package")
    return Path(next(iter(spec.submodule_search_locations)))


def version_of(package: str) -> str:
    try:
        return importlib.metadata.version(DISTRIBUTIONS.get(package, package))
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


@dataclass(frozen=True)
class _Line:
    index: int
    text: str
    statement_start: bool  # outside brackets and strings at its start
    openers: tuple[int, ...]  # columns of opening brackets outside strings and comments


def _code_lines(source: str) -> list[_Line]:
    """The lines of ``source`` that hold code: not blank, not only a comment, not a line of a
    string; with where statements start and where brackets open."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return []
    lines = source.split("\n")
    in_string: set[int] = set()
    first_kind: dict[int, int] = {}
    starts_inside: set[int] = set()
    openers: dict[int, list[int]] = {}
    depth = 0
    for token in tokens:
        row = token.start[0] - 1
        if token.type == tokenize.STRING:
            in_string.update(range(row + 1, token.end[0]))
        if token.type in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            continue
        if row not in first_kind:
            first_kind[row] = token.type
            if depth > 0:
                starts_inside.add(row)
        if token.type == tokenize.OP:
            if token.string in OPENERS:
                depth += 1
                openers.setdefault(row, []).append(token.start[1])
            elif token.string in ")]}":
                depth = max(0, depth - 1)
    found = []
    for row, kind in first_kind.items():
        if row in in_string or kind in (tokenize.COMMENT, tokenize.STRING):
            continue
        text = lines[row]
        if "\t" in text or len(text.strip()) < 6:
            continue
        found.append(_Line(row, text, row not in starts_inside, tuple(openers.get(row, ()))))
    return found


def _drawn_from(path: Path, root: Path) -> bool:
    """Modules only: not tests, not data tables under names no import can spell."""
    parts = path.relative_to(root).parts
    return (
        "tests" not in parts
        and all(part.removesuffix(".py").isidentifier() for part in parts)
        and path.stat().st_size < 400_000
    )


def _cursor(line: _Line, kind: str, rng: random.Random) -> int | None:
    """Where the cursor goes in ``line`` for ``kind``, or None when the line has no place."""
    code = line.text.rstrip()
    indent = len(code) - len(code.lstrip())
    if kind == "mid":
        low, high = indent + 1, len(code) - MIN_REST
        return rng.randint(low, high) if high >= low else None
    if kind == "newline":
        if indent == 0 or not line.statement_start or code.lstrip()[0] in ")]}":
            return None
        return indent
    places = [col + 1 for col in line.openers if len(code[col + 1 :].strip()) >= MIN_REST]
    return rng.choice(places) if places else None


def draw(packages: tuple[str, ...] = PACKAGES, per_kind: int = PER_KIND) -> list[RealCase]:
    """The set: ``per_kind`` cases of each kind, spread evenly over ``packages``."""
    rng = random.Random(SEED)
    cases: list[RealCase] = []
    for package_index, package in enumerate(packages):
        root = package_dir(package)
        files = sorted(path for path in root.rglob("*.py") if _drawn_from(path, root))
        pool: list[tuple[Path, str, _Line]] = []
        for path in files:
            source = path.read_text(encoding="utf-8", errors="strict")
            digest = hashlib.sha256(source.encode("utf-8")).hexdigest()
            pool += [(path, digest, line) for line in _code_lines(source)]
        rng.shuffle(pool)
        for kind in KINDS:
            # The first packages take the remainder, so each kind has ``per_kind`` cases.
            share = per_kind // len(packages) + (package_index < per_kind % len(packages))
            taken: set[tuple[Path, int]] = {(root / c.path, c.line) for c in cases}
            for path, digest, line in pool:
                if share == 0:
                    break
                if (path, line.index) in taken:
                    continue
                column = _cursor(line, kind, rng)
                if column is None:
                    continue
                expected = line.text.rstrip()[column:]
                cases.append(
                    RealCase(
                        package,
                        version_of(package),
                        str(path.relative_to(root)),
                        digest,
                        kind,
                        line.index,
                        column,
                        expected,
                    )
                )
                taken.add((path, line.index))
                share -= 1
    return cases


def save(cases: list[RealCase], path: Path = CASES_FILE) -> None:
    path.write_text("".join(json.dumps(asdict(case)) + "\n" for case in cases), encoding="utf-8")


def load(path: Path = CASES_FILE) -> list[RealCase]:
    return [RealCase(**json.loads(line)) for line in path.read_text("utf-8").splitlines() if line]


class ChangedPackage(Exception):
    """An installed file is not the one a case was drawn from."""


def drawn_package_dir(package: str, version: str) -> Path:
    """The package's directory at the version the cases were drawn from: the installed one, or,
    where another release is installed, that release's wheel from the package registry,
    unpacked once under ``DRAWN_COPIES``."""
    if version_of(package) == version:
        return package_dir(package)
    target = DRAWN_COPIES / f"{package}-{version}"
    if not (target / package).is_dir():
        wanted = f"{DISTRIBUTIONS.get(package, package)}=={version}"
        with tempfile.TemporaryDirectory() as folder:
            pip = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
            fetched = subprocess.run(
                [*pip, "--only-binary", ":all:", "--dest", folder, wanted],
                capture_output=True,
                text=True,
                check=False,
            )
            wheels = list(Path(folder).glob("*.whl"))
            if fetched.returncode != 0 or not wheels:
                raise ChangedPackage(
                    f"{package} {version_of(package)} is installed and {wanted} could not be "
                    f"fetched ({fetched.stderr.strip()[-300:]}); draw the cases again with "
                    "python -m tests.bench.realcode.cases"
                )
            unpacked = Path(folder) / "unpacked"
            with zipfile.ZipFile(wheels[0]) as wheel:
                wheel.extractall(unpacked)
            target.mkdir(parents=True, exist_ok=True)
            shutil.rmtree(target / package, ignore_errors=True)
            shutil.move(unpacked / package, target / package)
    return target / package


def document(case: RealCase) -> Document:
    """The case's document from the file it was drawn from; ``ChangedPackage`` when that file
    is not to be had any more."""
    root = drawn_package_dir(case.package, case.version)
    file = root / case.path
    source = file.read_text(encoding="utf-8")
    if hashlib.sha256(source.encode("utf-8")).hexdigest() != case.sha256:
        raise ChangedPackage(
            f"{case.package}/{case.path} is not the file the cases were drawn from ({case.version}"
            f" from {root}); draw the cases again with python -m tests.bench.realcode.cases"
        )
    lines = source.split("\n")
    # For every kind the line keeps what is before the cursor (``newline``: its indentation).
    lines[case.line] = lines[case.line][: case.column]
    return Document(case, root.parent, file, "\n".join(lines))


def main() -> int:
    parser = argparse.ArgumentParser(description="Draw the real-repository completion set.")
    parser.add_argument("--per-kind", type=int, default=PER_KIND)
    parser.add_argument("--out", type=Path, default=CASES_FILE)
    args = parser.parse_args()
    cases = draw(per_kind=args.per_kind)
    save(cases, args.out)
    by_kind = {kind: sum(c.kind == kind for c in cases) for kind in KINDS}
    print(f"{len(cases)} cases in {args.out}: {by_kind}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
