"""The assist daemon and its client side, in layers (see the README's "How it is built").
Its layers' import rules are import-linter contracts in pyproject.toml, checked by make lint.
"""

__version__ = "0.1.0"
