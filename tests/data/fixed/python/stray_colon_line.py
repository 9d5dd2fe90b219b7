"""Convert temperatures between Celsius, Fahrenheit and Kelvin."""

import sys

UNITS = ("C", "F", "K")


def to_celsius(value, unit):
    if unit == "F":
        return (value - 32) * 5 / 9
    if unit == "K":
        return value - 273.15
    return value


def from_celsius(value, unit):
    if unit == "F":
        return value * 9 / 5 + 32
    if unit == "K":
        return value + 273.15
    return value


def convert(value, source, target):
    celsius = to_celsius(value, source)
    result = from_celsius(celsius, target)
    return round(result, 2)


def main(argv):
    if len(argv) != 3 or argv[1] not in UNITS or argv[2] not in UNITS:
        print("usage: temp.py VALUE FROM TO   (units: C, F, K)", file=sys.stderr)
        return 2
    print(convert(float(argv[0]), argv[1], argv[2]), argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
