"""The ``assist`` command line: argument parsing, one module per command, terminal views."""
