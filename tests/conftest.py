"""Shared test set-up: no user config file or ASSIST_* variable leaks into the tests."""

from __future__ import annotations

import os
import tempfile

for _name in [n for n in os.environ if n.startswith("ASSIST_")]:
    del os.environ[_name]
os.environ["ASSIST_CONFIG"] = os.path.join(tempfile.gettempdir(), "assist-tests-no-config.toml")
