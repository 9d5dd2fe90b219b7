"""Sum the sizes of files under a directory, grouped by extension."""

import os
import sys
from collections import defaultdict


def sizes_by_extension(root):
    totals = defaultdict(int)
    for folder, _dirs, files in os.walk(root):
        for name in files:
            extension = os.path.splitext(name)[1].lower() or "(none)"
            try:
                totals[extension] += os.path.getsize(os.path.join(folder, name))
            except OSError:
                continue
    return totals


def human(size):
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024:
            return f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TB"


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    totals = sizes_by_extension(root)
    grand_total = sum(totals.values())
    for extension, size in sorted(totals.items(), key=lambda item: -item[1]):
        print(f"{extension:<10} {human(size):>10}")
    print(grand_total)
    return 0


if __name__ == "__main__":
    sys.exit(main())
