import re
from dataclasses import dataclass

TOKEN = re.compile(r"\s*(?:(\d+\.?\d*)|(.))")


@dataclass
class Token:
    kind: str
    value: str


def tokenize(expression):
    tokens = []
    for number, op in TOKEN.findall(expression):
        if number:
            tokens.append(Token("num", number))
        elif op in "+-*/()":
            tokens.append(Token("op", op))
        elif op.strip():
            raise ValueError(f"unexpected character {op!r}")
    return tokens


def evaluate(expression):
    tokens = tokenize(expression)
    position = 0

    def atom():
        nonlocal position
        token = tokens[position]
        position += 1
        if token.value == "(":
            value = expr()
            position += 1
          return value
        return float(token.value)

    def expr():
        nonlocal position
        value = atom()
        while position < len(tokens) and tokens[position].value in "+-":
            op = tokens[position].value
            position += 1
            value = value + atom() if op == "+" else value - atom()
        return value

    return expr()


print(evaluate("1 + (2 - 0.5) + 4"))
