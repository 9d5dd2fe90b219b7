import os
import shutil
import sys

USAGE = "usage: backup.py SOURCE DEST [--dry-run]


def copy_tree(source, dest, dry_run=False):
    copied = 0
    for root, _dirs, files in os.walk(source):
        target = os.path.join(dest, os.path.relpath(root, source))
        if not dry_run:
            os.makedirs(target, exist_ok=True)
        for name in files:
            if name.endswith((".tmp", ".swp")):
                continue
            if not dry_run:
                shutil.copy2(os.path.join(root, name), os.path.join(target, name))
            copied += 1
    return copied


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    if len(args) != 2:
        print(USAGE, file=sys.stderr)
        return 2
    count = copy_tree(args[0], args[1], dry_run="--dry-run" in argv)
    print(f"copied {count} files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
