"""Report how much disk space is left on each mount point."""

import shutil
import sys

MOUNTS = ["/", "/home", "/var"]


def usage(mount):
    total, used, free = shutil.disk_usage(mount)
    return used / total * 100, free


def gigabytes(size):
    return size / 1024**3


def main():
    warn_at = float(sys.argv[1]) if len(sys.argv) > 1 else 90.0
    status = 0
    for mount in MOUNTS:
        try:
            percent, free = usage(mount)
        except FileNotFoundError:
            continue
        line = f"{mount:<8} {percent:5.1f}% used, {gigabytes(free):.1f} GiB free"
        if percent >= warn_at:
            line += "  <-- nearly full"
            status = 1
        print(line)
    return status


if __name__ == "__main__":
    sys.exit(main())
