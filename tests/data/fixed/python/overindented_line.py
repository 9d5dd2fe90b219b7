"""Rotate log files: app.log -> app.log.1 -> app.log.2 ..., keeping a few."""

import os
import sys


def rotate(path, keep):
    oldest = f"{path}.{keep}"
    if os.path.exists(oldest):
        os.remove(oldest)
    for number in range(keep - 1, 0, -1):
        source = f"{path}.{number}"
        if os.path.exists(source):
            os.rename(source, f"{path}.{number + 1}")
    if os.path.exists(path):
        os.rename(path, f"{path}.1")
    open(path, "a", encoding="utf-8").close()


def main(argv):
    if not argv:
        print("usage: rotate.py LOGFILE [KEEP]", file=sys.stderr)
        return 2
    keep = int(argv[1]) if len(argv) > 1 else 5
    rotate(argv[0], keep)
    print(f"rotated {argv[0]}, keeping {keep}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
