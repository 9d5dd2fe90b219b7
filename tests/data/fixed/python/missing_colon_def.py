"""Summarise a CSV file: row count and the sum of one numeric column."""

import argparse
import csv
import sys


def parse_args(argv):
    parser = argparse.ArgumentParser(description="Summarise a CSV file.")
    parser.add_argument("path", help="the CSV file to read")
    parser.add_argument("--column", default="amount", help="numeric column to sum")
    parser.add_argument("--delimiter", default=",")
    return parser.parse_args(argv)


def summarise(path, column, delimiter):
    rows = 0
    total = 0.0
    with open(path, newline="", encoding="utf-8") as handle:
        for record in csv.DictReader(handle, delimiter=delimiter):
            rows += 1
            try:
                total += float(record[column])
            except (KeyError, ValueError):
                continue
    return rows, total


def main(argv=None):
    args = parse_args(argv)
    rows, total = summarise(args.path, args.column, args.delimiter)
    print(f"{rows} rows, {args.column} total = {total:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
