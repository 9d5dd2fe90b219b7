"""Watch a file and print the lines appended to it, like tail -f."""

import os
import sys
import time


def follow(path, interval=0.5):
    with open(path, encoding="utf-8", errors="replace") as handle:
        handle.seek(0, os.SEEK_END)
        while True:
            line = handle.readline()
            if line == "":
                time.sleep(interval)
                continue
            yield line.rstrip("\n")


def main(argv):
    if len(argv) != 1:
        print("usage: follow.py FILE", file=sys.stderr)
        return 2
    pattern = os.environ.get("FOLLOW_GREP", "")
    try:
        for line in follow(argv[0]):
            if pattern == "" or pattern in line:
                print(line, flush=True)
    except KeyboardInterrupt:
        print("\nstopped", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
