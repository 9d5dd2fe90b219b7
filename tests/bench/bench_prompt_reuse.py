"""What the KV prefix reuse saves while typing: time to first token on a ~1,200-token file.

Starts a daemon on a free loopback port with a cache of its own and prints, as medians over a
few rounds measured in one run:
  cold       a document the model has not seen (nothing reused),
  typing     the same document with one more line typed at the end (prefix reused),
  header     a different document with the same profile header (only the header reused),
and the ratio cold / typing. Run: .venv/bin/python tests/bench/bench_prompt_reuse.py
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

from daemon.bench import SETTLE_S
from daemon.client.daemon_client import DaemonClient
from daemon.client.launcher import free_port, launch
from daemon.protocol import CompleteRequest, DoneEvent, WorkspaceProfile
from daemon.settings import load_settings

PROFILE = WorkspaceProfile(language="python", versions={"python": ">=3.11"})
FUNCTION = '''

def handler_{n}(request: dict) -> dict:
    """Validate request {n} and build its response."""
    if "id" not in request:
        raise KeyError("id")
    return {{"id": request["id"], "handled_by": {n}}}
'''


def document() -> str:
    body = "".join(FUNCTION.format(n=n) for n in range(18))
    tail = "\n\ndef handler_final(request: dict) -> dict:\n    "
    return f"# {uuid.uuid4().hex}\nimport json\n{body}{tail}"


def first_token_ms(client: DaemonClient, text: str) -> tuple[float, DoneEvent]:
    lines = text.split("\n")
    request = CompleteRequest(
        text=text,
        line=len(lines) - 1,
        column=len(lines[-1]),
        path="handlers.py",
        profile=PROFILE,
        max_tokens=4,
        cache=False,
    )
    done = None
    for event in client.complete(request):
        if isinstance(event, DoneEvent):
            done = event
    assert done is not None and done.timings.first_token_ms is not None
    return done.timings.first_token_ms, done


def main(rounds: int = 5) -> int:
    work = Path(tempfile.mkdtemp(prefix="assist-bench-reuse-"))
    settings = load_settings(port=free_port(), cache_path=work / "cache.sqlite3")
    process, _ = launch(settings, work / "daemon.log")
    cold, typing, header = [], [], []
    try:
        with DaemonClient(settings.daemon_url) as client:
            prompt_tokens = 0
            for _ in range(rounds):
                text = document()
                ms, done = first_token_ms(client, text)
                cold.append(ms)
                prompt_tokens = done.prompt_tokens
                time.sleep(SETTLE_S)
                ms, done = first_token_ms(client, text + "data = json.dumps(request)\n    ")
                typing.append(ms)
                reused = done.reused_tokens
                time.sleep(SETTLE_S)
                ms, _ = first_token_ms(client, document())
                header.append(ms)
                time.sleep(SETTLE_S)
    finally:
        process.terminate()
        process.wait(timeout=30)
    med = statistics.median
    print(f"prompt reuse: {prompt_tokens}-token prompt, median of {rounds} rounds")
    print(f"  cold     first token {med(cold):8.1f} ms")
    print(f"  typing   first token {med(typing):8.1f} ms  ({reused} tokens reused)")
    print(f"  header   first token {med(header):8.1f} ms  (only the profile header reused)")
    print(f"  cold / typing        {med(cold) / med(typing):8.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
