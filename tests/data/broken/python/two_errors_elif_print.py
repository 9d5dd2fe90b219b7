"""A tiny interactive calculator that keeps a running total."""

import sys


def apply(total, operator, operand):
    if operator == "+":
        return total + operand
    elif operator == "-":
        return total - operand
    else if operator == "*":
        return total * operand
    elif operator == "/":
        if operand == 0:
            raise ZeroDivisionError("cannot divide by zero")
        return total / operand
    raise ValueError(f"unknown operator {operator!r}")


def main():
    total = 0.0
    for line in sys.stdin:
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "quit":
            break
        try:
            total = apply(total, parts[0], float(parts[1]))
        except (IndexError, ValueError, ZeroDivisionError) as error:
            print("error:", error)
            continue
        print "=", total
    return 0


if __name__ == "__main__":
    sys.exit(main())
