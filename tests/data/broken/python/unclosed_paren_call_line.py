"""Print a table of the largest files in a directory tree."""

import os
import sys


def largest_files(root, count):
    found = []
    for folder, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            if os.path.isfile(path):
                found.append((os.path.getsize(path), path))
    found.sort(reverse=True)
    return found[:count]


def print_table(rows):
    if not rows:
        print("no files")
        return
    width = max(len(path) for _size, path in rows)
    width = min(width, 72
    for size, path in rows:
        print(f"{path:<{width}}  {size:>12,}")


def main(argv):
    root = argv[0] if argv else "."
    count = int(argv[1]) if len(argv) > 1 else 10
    print_table(largest_files(root, count))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
