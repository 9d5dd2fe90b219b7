"""The assist daemon and its client library: wire protocol, workspace profile, prompt building,
result cache, model engine, HTTP API, client and command line."""

__version__ = "0.1.0"
