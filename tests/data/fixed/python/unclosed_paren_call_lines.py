"""Command line for a small image thumbnailer."""

import argparse
import sys


def build_parser():
    parser = argparse.ArgumentParser(description="Make thumbnails of images.")
    parser.add_argument("inputs", nargs="+", help="image files to shrink")
    parser.add_argument(
        "--size",
        type=int,
        default=256,
        help="longest side of a thumbnail, in pixels",
    )
    parser.add_argument(
        "--format", choices=["png", "jpeg", "webp"], default="jpeg", help="output image format"
    )
    parser.add_argument("--output", default="thumbs", help="folder to write to")
    return parser


def plan(options):
    for path in options.inputs:
        stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        yield path, f"{options.output}/{stem}_{options.size}.{options.format}"


def main(argv=None):
    options = build_parser().parse_args(argv)
    for source, target in plan(options):
        print(f"{source} -> {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
