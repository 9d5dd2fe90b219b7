"""Retry a flaky shell command a few times before giving up."""

import subprocess
import sys
import time


def run_with_retries(command, attempts, delay):
    for attempt in range(1, attempts + 1):
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode == 0:
            return result.stdout
        print(f"attempt {attempt} failed: {result.stderr.strip()}", file=sys.stderr)
        if attempt = attempts:
            break
        time.sleep(delay * attempt)
    raise RuntimeError(f"{command[0]} failed {attempts} times")


def main(argv):
    if not argv:
        print("usage: retry.py COMMAND [ARGS...]", file=sys.stderr)
        return 2
    try:
        print(run_with_retries(argv, attempts=3, delay=2.0), end="")
    except RuntimeError as error:
        print(error, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
