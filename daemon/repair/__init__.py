"""The repair pipeline: diagnose, propose candidates, verify, and rank them by intent."""
