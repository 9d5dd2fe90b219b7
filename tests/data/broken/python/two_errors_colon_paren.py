"""Validate a YAML-like key: value config file, line by line."""

import sys

REQUIRED = ("name", "version", "entry")


def parse(lines):
    config = {}
    for number, line in enumerate(lines, start=1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if ":" not in line
            raise ValueError(f"line {number}: expected 'key: value'")
        key, value = line.split(":", 1)
        config[key.strip()] = value.strip()
    return config


def missing_keys(config):
    return [key for key in REQUIRED if not config.get(key)]


def main(argv):
    path = argv[0] if argv else "package.conf"
    with open(path, encoding="utf-8") as handle:
        config = parse(handle
    missing = missing_keys(config)
    if missing:
        print(f"{path}: missing {', '.join(missing)}", file=sys.stderr)
        return 1
    print(f"{config['name']} {config['version']} ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
