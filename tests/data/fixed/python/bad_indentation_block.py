"""A tiny INI-style parser: sections of key = value lines."""


class ParseError(Exception):
    pass


def parse(text):
    sections = {}
    current = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1].strip(), {})
            continue
        if current is None:
            raise ParseError(f"line {number}: key outside a section")
        key, sep, value = line.partition("=")
        if not sep:
            raise ParseError(f"line {number}: expected key = value")
        current[key.strip()] = value.strip()
    return sections


SAMPLE = """
[server]
host = 0.0.0.0
port = 8000

[database]
url = postgres://localhost/app
"""

if __name__ == "__main__":
    for name, values in parse(SAMPLE).items():
        print(name, values)
