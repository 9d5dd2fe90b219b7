"""Every setting is read somewhere: a flag that does nothing is a defect."""

from __future__ import annotations

import re
from pathlib import Path

from daemon.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


def test_every_setting_is_read():
    """A field is read as ``.name`` (its declaration is ``name: type = Field(...)``)."""
    sources = [
        path.read_text()
        for package in ("daemon", "lsp", "models")
        for path in (ROOT / package).rglob("*.py")
    ]
    code = "\n".join(sources)
    unread = [name for name in Settings.model_fields if not re.search(rf"\.{name}\b", code)]
    assert unread == [], f"settings declared but never read: {unread}"
