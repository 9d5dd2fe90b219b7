"""The repair rules alone on a generated typo corpus (tests/bench/typos.py): no model, no daemon.

A quick figure for work on the rules, beside ``bench_fix.py --corpus DIR`` (the whole pipeline
with the model, the figure that counts): each broken file is repaired by the rules in rounds,
as ``assist fix`` does with the model asked for nothing, and the result is scored as bench_fix
scores it: as meant, different, declined, invalid (rejected by the language's own checker, as
the corpus was checked), or called clean. Printed by language and by kind, with the median
time of a repair.
Run: .venv/bin/python tests/bench/typos_rules.py /tmp/typos [--only java,c] [--show KIND|all]
"""

from __future__ import annotations

import argparse
import difflib
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.bench_fix import LANGUAGES, Corpus, name_of
from tests.unit.test_repair_rules import repaired

OUTCOMES = ("intended", "different", "declined", "invalid", "clean")


def _difference(broken: str, fixed: str | None, meant: str) -> str:
    """The lines where the repair (or, declined, the broken file) and the author's differ."""
    ours = broken if fixed is None else fixed
    diff = difflib.unified_diff(meant.split("\n"), ours.split("\n"), "meant", "repair", n=0)
    return "\n".join(line for line in diff if not line.startswith(("---", "+++")))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--only", help="languages, comma-separated")
    parser.add_argument(
        "--show", help="print the cases of this kind (or 'all') that were not as meant"
    )
    args = parser.parse_args()
    corpus = Corpus.open(args.corpus)
    only = set(args.only.split(",")) if args.only else None
    by_language: dict[str, Counter[str]] = defaultdict(Counter)
    by_kind: dict[str, Counter[str]] = defaultdict(Counter)
    times = []
    for path in corpus.files(only):
        language = LANGUAGES[path.suffix]
        case = corpus.cases.get(name_of(path), {})
        kind = case.get("kind", "?")
        broken = path.read_text(encoding="utf-8")
        began = time.perf_counter()
        fixed = repaired(language, broken)
        times.append(time.perf_counter() - began)
        outcome = corpus.outcome(path, fixed, called_clean=fixed == broken)
        by_language[language][outcome] += 1
        by_kind[kind][outcome] += 1
        if args.show in (kind, "all") and outcome != "intended":
            print(f"--- {name_of(path)} {outcome}")
            print(_difference(broken, fixed, corpus.twin(path)))
    for title, table in (("language", by_language), ("kind", by_kind)):
        print(f"\n{title:<26}" + "".join(f"{o:>10}" for o in OUTCOMES) + "     total")
        for name, counts in sorted(table.items()):
            total = sum(counts.values())
            row = "".join(f"{counts[o]:>10}" for o in OUTCOMES)
            print(f"{name:<26}{row}{total:>10}  {counts['intended'] / total:.0%}")
    total = sum(sum(c.values()) for c in by_language.values())
    meant = sum(c["intended"] for c in by_language.values())
    print(
        f"\nas meant {meant}/{total} ({meant / total:.1%}), median repair "
        f"{statistics.median(times) * 1000:.0f} ms"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
