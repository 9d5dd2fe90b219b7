"""Word frequencies of a text file, ignoring common words."""

import re
import sys
from collections import Counter

STOP_WORDS = {"the", "a", "an", "and", "or", "of", "to", "in", "is", "it", "that"}


def words(text):
    return [word for word in re.findall(r"[a-z']+", text.lower()) if word not in STOP_WORDS]


def top_words(path, limit):
    with open(path, encoding="utf-8") as handle:
        counts = Counter(words(handle.read()))
    return counts.most_common(limit)


def main(argv):
    if not argv:
        print("usage: freq.py FILE [LIMIT]", file=sys.stderr)
        return 2
    limit = 20
    if len(argv) > 1:
        limit = int(argv[1])
    for word, count in top_words(argv[0], limit):
        print(f"{count:>6}  {word}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
