"""Checks that judge code: parsers, verification, ruff's findings, the workspace's formatter."""
