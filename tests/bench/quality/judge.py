"""Whether a program passes its task's tests: run in a subprocess with a timeout, never here.

Model output is never executed by the daemon; the benchmark runs it in a throwaway interpreter
with an empty environment and a temporary working directory, as HumanEval's own harness does.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

TIMEOUT_S = 10.0


def passes(program: str, timeout_s: float = TIMEOUT_S) -> bool:
    with tempfile.TemporaryDirectory(prefix="assist-judge-") as work:
        try:
            done = subprocess.run(
                [sys.executable, "-I", "-c", program],
                cwd=work,
                env={"PATH": os.environ.get("PATH", "")},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return False
    return done.returncode == 0


def judge_all(programs: list[str], workers: int = 2) -> list[bool]:
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(passes, programs))
