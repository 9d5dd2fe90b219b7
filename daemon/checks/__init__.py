"""Checks that judge code: syntax errors from real parsers, verification of an answer, ruff's
findings, and the workspace's formatter."""
