"""Real TLS files for tests, made on the spot by trustme: a private CA and a certificate it
signed for this machine's loopback names, written as the PEM files a daemon and its clients use.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import trustme


@dataclass(frozen=True)
class Certificates:
    ca: Path  # the private CA's certificate: what clients verify with (--ca)
    cert: Path  # the daemon's certificate and chain (--tls-cert)
    key: Path  # its private key (--tls-key)


def make_certificates(folder: Path, *names: str) -> Certificates:
    """A new CA, and a certificate it signed for ``names`` (default: 127.0.0.1 and localhost)."""
    folder.mkdir(parents=True, exist_ok=True)
    authority = trustme.CA()
    issued = authority.issue_cert(*(names or ("127.0.0.1", "localhost")))
    files = Certificates(folder / "ca.pem", folder / "cert.pem", folder / "key.pem")
    authority.cert_pem.write_to_path(str(files.ca))
    for n, pem in enumerate(issued.cert_chain_pems):
        pem.write_to_path(str(files.cert), append=n > 0)
    issued.private_key_pem.write_to_path(str(files.key))
    return files
