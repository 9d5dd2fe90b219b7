"""Check that the services a deployment needs answer on their ports."""

import socket
import sys
from typing import NamedTuple


class Service(NamedTuple):
    name: str
    host: str
    port: int


SERVICES = [
    Service("postgres", "db.internal", 5432),
    Service("redis", "cache.internal", 6379),
    Service("api", "api.internal", 8080),
    Service("metrics", "metrics.internal", 9090),
]


def is_open(host, port, timeout=1.5):
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def main():
    failures = 0
    for service in SERVICES:
        ok = is_open(service.host, service.port)
        failures += not ok
        status = "up" if ok else "DOWN"
        print(f"{service.name:<10} {service.host}:{service.port:<6} {status}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
