"""Classify HTTP status codes from an access log and print a summary."""

import sys
from collections import Counter


def classify(status):
    if status < 200:
        return "informational"
    elif status < 300:
        return "success"
    else if status < 400:
        return "redirect"
    elif status < 500:
        return "client error"
    return "server error"


def read_statuses(path):
    statuses = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            fields = line.split()
            if len(fields) > 8 and fields[8].isdigit():
                statuses.append(int(fields[8]))
    return statuses


def main(argv):
    if len(argv) != 1:
        print("usage: statuses.py ACCESS_LOG", file=sys.stderr)
        return 2
    counts = Counter(classify(status) for status in read_statuses(argv[0]))
    for kind, count in counts.most_common():
        print(f"{kind:>14}  {count}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
