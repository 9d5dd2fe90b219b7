import argparse
import logging

LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}

DEFAULTS = {
    "level": "info",
    "retries": 3
    "timeout": 10.0,
    "verbose": False,
}


def build_parser():
    parser = argparse.ArgumentParser(prog="sync")
    parser.add_argument("--level", choices=sorted(LEVELS), default=DEFAULTS["level"])
    parser.add_argument("--retries", type=int, default=DEFAULTS["retries"])
    parser.add_argument("--timeout", type=float, default=DEFAULTS["timeout"])
    parser.add_argument("--verbose", action="store_true")
    return parser


def configure(argv=None):
    options = build_parser().parse_args(argv)
    logging.basicConfig(level=LEVELS[options.level], format="%(levelname)s %(message)s")
    logging.debug("options: %s", vars(options))
    return options


if __name__ == "__main__":
    configure()
