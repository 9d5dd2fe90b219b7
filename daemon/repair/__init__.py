"""The repair pipeline: diagnose, propose candidates (parser hints, model continuations and
rewrites), verify, and answer with the smallest verified change."""
