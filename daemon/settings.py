"""Settings of the daemon and its clients, declared once: flags, ``ASSIST_`` variables, TOML keys.
Precedence: flags, environment, config file, defaults."""

from __future__ import annotations

import argparse
import ipaddress
import os
import ssl
import types
import typing
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, ValidationInfo, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from models.catalog import DEFAULT_MODEL, UnknownModel, find_model

DEFAULT_PORT = 8765
# The default of `min_confidence`, chosen from the real-code benchmark's curve (README).
MIN_CONFIDENCE = 0.05
# The default of `candidates_cost_limit` (daemon.engine.worker measures the cost at start).
FORK_COST_LIMIT = 1.5
# The default of `candidates_branch_below`, chosen on the real-code benchmark (README).
BRANCH_BELOW = 0.7


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "assist"


def default_config_file() -> Path:
    explicit = os.environ.get("ASSIST_CONFIG")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "assist" / "config.toml"


def is_loopback(host: str) -> bool:
    """True for addresses only this machine can reach."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class SettingsError(ValueError):
    """A setting has a bad value; the message names it."""


def check_ca_file(path: Path) -> Path:
    """A CA file that clients can verify the daemon with: PEM certificates, readable."""
    path = path.expanduser()
    try:
        ssl.create_default_context(cafile=str(path))
    except OSError as exc:  # missing, unreadable, or (ssl.SSLError) no PEM certificate in it
        raise ValueError(
            f"cannot use {path} as the CA file ({exc.strerror or exc}): give the PEM "
            f"certificate of the CA that signed the daemon's certificate"
        ) from None
    return path


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ASSIST_", extra="ignore", validate_default=True)

    # Where the daemon listens and where clients find it.
    host: str = Field("127.0.0.1", description="Address the daemon binds to (loopback by default).")
    port: int = Field(DEFAULT_PORT, ge=1, le=65535, description="TCP port of the daemon.")
    url: str | None = Field(
        None,
        description="Daemon URL used by clients; defaults to http://HOST:PORT (https:// with "
        "tls_cert).",
    )

    # The model.
    model: str = Field(
        DEFAULT_MODEL,
        description="Model to load by name (see `assist models`) when model_path is unset.",
    )
    model_path: Path | None = Field(
        None, description="GGUF model to load; the named model (`model`) when unset."
    )
    prompt_format: str | None = Field(
        None, description="Force a prompt format (qwen2.5-coder, codegemma, plain, ...)."
    )
    n_ctx: int = Field(
        4096,
        ge=256,
        description="Context window of each document in tokens (on a GPU, lowered at start if "
        "its memory is short, unless given).",
    )
    n_batch: int = Field(512, ge=8, description="Prompt tokens evaluated per decode call.")
    n_threads: int | None = Field(
        None, ge=1, description="CPU threads; defaults to the CPUs this process may run on."
    )
    n_gpu_layers: int = Field(
        -1, description="Layers to offload when a GPU backend is present (-1: all, 0: none)."
    )
    flash_attn: Literal["auto", "on", "off"] = Field(
        "auto",
        description="Flash attention: 'auto' (llama.cpp's default) uses it where the model's "
        "devices support it.",
    )

    # Budgets of the two paths (a request may state its own, up to the limits below).
    fast_max_tokens: int = Field(
        48, ge=1, description="Fast path: tokens for finishing a line or the next short lines."
    )
    fast_deadline_ms: int = Field(3000, ge=100, description="Fast path: total deadline (ms).")
    deep_max_tokens: int = Field(
        256, ge=1, description="Deep path: tokens for a whole body (each of logic and errors)."
    )
    deep_deadline_ms: int = Field(20000, ge=100, description="Deep path: total deadline (ms).")
    deep_target_ms: int = Field(
        4000,
        ge=100,
        description="Deep path: when the whole body should be on screen; its token budget is "
        "sized from the model's measured speed, and the errors pass runs only when it fits.",
    )
    errors_share: float = Field(
        0.4, gt=0, lt=1, description="Deep path: share of the deadline kept for the errors stage."
    )
    deep_comments: bool = Field(
        False,
        description="Deep path: let the body's first pass write comments (off: the tokens that "
        "open one are forbidden, so bodies are shorter and come sooner).",
    )
    fix_candidates: int = Field(
        3, ge=1, le=16, description="Repair: model candidates tried at most (varied sampling)."
    )
    fix_max_tokens: int = Field(
        160, ge=8, description="Repair: tokens for one candidate replacement of the span."
    )
    fix_deadline_ms: int = Field(30000, ge=100, description="Repair: total deadline (ms).")
    fix_span_lines: int = Field(
        12, ge=1, description="Repair: most lines of the original one candidate replaces."
    )
    fix_parser_hints: bool = Field(
        True, description="Repair: try the parser's own hints (a missing ')') before the model."
    )
    fix_judge: bool = Field(
        True,
        description="Repair: let the model judge verified candidates that the rules cannot "
        "tell apart (the log-likelihood of each one's lines).",
    )
    max_tokens_limit: int = Field(1024, ge=1, description="Most tokens a request may ask for.")
    deadline_limit_ms: int = Field(
        60000, ge=100, description="Longest deadline a request may ask for in milliseconds."
    )
    prompt_budget_tokens: int = Field(
        1536, ge=64, description="Most prompt tokens: the window around the cursor is cut to it."
    )
    suffix_budget_tokens: int = Field(
        256, ge=0, description="Share of the prompt budget given to text after the cursor (FIM)."
    )
    context_budget_tokens: int = Field(
        384,
        ge=0,
        description="Share of the prompt budget for snippets of other files of the workspace "
        "that a completion request carries (0 turns them off).",
    )
    chunk_tokens: int = Field(
        128, ge=8, description="Prompt tokens evaluated between checks for cancellation."
    )
    parallel: int = Field(
        4,
        ge=1,
        le=64,
        description="Jobs the engine decodes together (continuous batching); each may use "
        "n_ctx tokens of the KV cache. On a GPU, sized to its memory unless given.",
    )
    kv_slots: int = Field(
        8,
        ge=1,
        le=128,
        description="Sequences kept in the model's KV cache: recently active documents keep "
        "their prompt evaluated (at least 'parallel'; the least recently used give way). On a "
        "GPU, sized to its memory unless given.",
    )
    gpu_memory_share: float = Field(
        0.8,
        gt=0,
        le=1,
        description="On a GPU: the share of the device's free memory the daemon may use; "
        "parallel, kv_slots and n_ctx are sized at start to fit in it (those given explicitly "
        "are kept).",
    )
    reuse_after_edit: bool = Field(
        False,
        description="After an edit, keep the KV of the unchanged chunks below it, moved to their "
        "new positions: a much faster first token after an edit near the top, but the moved "
        "chunks' KV predates the edit, so an answer can differ from a cold evaluation's. The "
        "edited lines are evaluated in the spare KV stream and joined in, for models with a "
        "plain KV cache (Qwen2.5-Coder; not Gemma 3's sliding-window cache, which then keeps "
        "only chunks that need no new lines before them).",
    )
    # Remote generation: OpenAI-compatible completion servers instead of the local model.
    backend: list[str] = Field(
        default_factory=list,
        description="URL of an OpenAI-compatible completion server (llama.cpp's server, vLLM, "
        "llama-cpp-python's server) to generate on instead of the local model; repeat for "
        "several. The local model file still gives the vocabulary and prompt format.",
    )
    backend_model: str | None = Field(
        None, description="Model name sent to the backends; by default what /v1/models names."
    )
    backend_limit: int = Field(
        4, ge=1, le=256, description="Requests one backend runs at once (match its slots)."
    )
    backend_check_s: float = Field(
        2.0, gt=0, description="How often each backend's health is checked (s)."
    )
    backend_api_key: str | None = Field(
        None, description="Bearer token the backends require (vLLM's --api-key), if any."
    )
    max_request_bytes: int = Field(
        2 * 1024 * 1024, ge=1024, description="Largest accepted request body in bytes."
    )
    queue_size: int = Field(
        16, ge=1, description="Requests that may wait for the model before new ones get 429."
    )
    user_queue_size: int = Field(
        6, ge=1, description="Requests of one user that may wait (the rest of the queue is fair)."
    )
    kv_states_bytes: int = Field(
        512 * 1024 * 1024,
        ge=0,
        description="Host memory for saved KV states of recent prompts (0 turns them off).",
    )
    kv_disk_bytes: int = Field(
        2 * 1024 * 1024 * 1024,
        ge=0,
        description="Disk for saved KV states (in the kv folder beside the result cache), kept "
        "across restarts: those evicted from host memory, and at a clean shutdown every one; "
        "least recently used files go first (0 turns it off).",
    )
    prefetch: bool = Field(
        True, description="After an answer is accepted, prepare the next one while idle."
    )
    workspace: Path | None = Field(
        None,
        description="A folder whose workspace profile (kept fresh by watchdog) is given to "
        "drop-in requests that bring none (llama.vim, OpenAI's clients) and whose files lie "
        "in it. Only this folder is read, never a path a request names.",
    )
    temperature: float = Field(0.0, ge=0.0, le=2.0, description="Sampling temperature.")
    postprocess: bool = Field(
        True,
        description="Trim each answer to the gap at the cursor: no repeats of the code below, "
        "no lines outside the block, the block's indentation.",
    )
    token_healing: bool = Field(
        True,
        description="Fast-path completions: the prompt ends before the last token of the "
        "text before the cursor on its line, and the model writes that token whole (a prompt "
        "cut inside a word or an indentation ends where code is rarely cut).",
    )
    candidates: int = Field(
        3,
        ge=1,
        le=8,
        description="Fast-path completions: continuations decoded together from the one "
        "prompt, branching where the model is first unsure of the first line (see "
        "candidates_branch_below); the best is shown, the others are alternatives to cycle to.",
    )
    candidates_branch_below: float = Field(
        BRANCH_BELOW,
        gt=0.0,
        le=1.0,
        description="The candidates branch at the first token of the first line that the "
        "model gives less than this share, each from another of the most likely tokens there; "
        "a line the model is sure of throughout gets no alternatives. 1 branches at the first "
        "token whatever its share.",
    )
    candidates_cost_limit: float = Field(
        FORK_COST_LIMIT,
        ge=0.0,
        description="Decode the candidates only where a step of three sequences costs at most "
        "this many steps of one (measured at start: about 1 on a GPU, about 3 on a CPU of few "
        "cores, where they would make every answer wait); 0 decodes them wherever there is room.",
    )
    min_confidence: float = Field(
        MIN_CONFIDENCE,
        ge=0.0,
        le=1.0,
        description="Fast-path completions: an answer whose first line the model gives less "
        "than this probability is held back (no suggestion rather than a wrong one), and so is "
        "one that brings a new undefined name (Python, with ruff); 0 shows every answer. Moves "
        "per user with their acceptances.",
    )

    # The result cache.
    cache_path: Path | None = Field(
        None,
        description="SQLite result cache shared by daemons; defaults to CACHE_DIR/cache.sqlite3.",
    )
    cache_dir: Path = Field(
        default_factory=default_cache_dir, description="Directory for the cache and the model."
    )
    cache_max_entries: int = Field(
        100_000, ge=1, description="Most results kept in SQLite; least recently used go first."
    )
    cache_max_bytes: int = Field(
        256 * 1024 * 1024, ge=1024, description="Most bytes of results kept in SQLite."
    )
    cache_memory_entries: int = Field(
        2048, ge=0, description="Results kept in memory in front of SQLite."
    )

    # A daemon shared by a team.
    tokens: Path | None = Field(
        None,
        description="Tokens file (TOML, hashed per-user tokens); required off loopback.",
    )
    token: str | None = Field(
        None, description="Clients: the token sent to a daemon that requires one."
    )
    tls_cert: Path | None = Field(
        None,
        description="PEM certificate (with its chain) the daemon serves HTTPS with, with "
        "tls_key; required off loopback unless allow_plaintext. Clients that read it reach "
        "https://HOST:PORT.",
    )
    tls_key: Path | None = Field(
        None, description="PEM private key of tls_cert (keep it readable by the daemon only)."
    )
    allow_plaintext: bool = Field(
        False,
        description="Serve plain HTTP off loopback, for a daemon behind a TLS proxy that "
        "terminates HTTPS for it (a warning at start).",
    )
    ca: Path | None = Field(
        None,
        description="Clients: PEM certificate of the CA that signed the daemon's certificate "
        "(a private CA); the system's CAs when unset.",
    )
    rate_limit_per_minute: int = Field(
        600, ge=0, description="Requests per user per minute (0: no limit)."
    )
    rate_limit_burst: int = Field(60, ge=1, description="Requests a user may send at once.")
    evict_after_rejects: int = Field(
        3, ge=1, description="Rejections after which a cached answer is evicted."
    )

    # What the daemon does, in figures.
    metrics: bool = Field(True, description="Keep one record per request for stats and /metrics.")
    metrics_path: Path | None = Field(
        None, description="SQLite file of request records; defaults to CACHE_DIR/metrics.sqlite3."
    )
    metrics_retention_days: float = Field(30.0, gt=0, description="Keep records this many days.")
    metrics_max_rows: int = Field(1_000_000, ge=1000, description="Keep at most this many records.")
    p99_warn_ms: float = Field(
        500.0, gt=0, description="Warn when fast-path completions' P99 goes above this (ms)."
    )
    hit_rate_floor: float = Field(
        0.05, ge=0, le=1, description="Warn when the completion cache hit rate falls below this."
    )
    metrics_check_s: float = Field(60.0, gt=0, description="How often those two are checked (s).")

    log_level: str = Field("info", description="Log level: debug, info, warning or error.")

    @field_validator("model")
    @classmethod
    def _known_model(cls, name: str) -> str:
        try:
            return find_model(name).name
        except UnknownModel as exc:
            raise ValueError(f"{exc}; `assist models` lists them") from None

    @field_validator("backend")
    @classmethod
    def _backend_urls(cls, urls: list[str]) -> list[str]:
        for url in urls:
            if not url.startswith(("http://", "https://")) or len(url.split("://", 1)[1]) < 1:
                raise ValueError(f"{url!r} is not a server URL (e.g. http://gpu-node:8080)")
        if len({u.rstrip("/") for u in urls}) != len(urls):
            raise ValueError("a backend is named twice")
        return [u.rstrip("/") for u in urls]

    @field_validator("ca")
    @classmethod
    def _readable_ca(cls, path: Path | None) -> Path | None:
        return None if path is None else check_ca_file(path)

    @field_validator("tls_key")
    @classmethod
    def _tls_pair(cls, key: Path | None, info: ValidationInfo) -> Path | None:
        cert = info.data.get("tls_cert")
        if (cert is None) != (key is None):
            given, missing = ("tls_cert", "tls_key") if key is None else ("tls_key", "tls_cert")
            raise ValueError(
                f"{given} is set without {missing}: HTTPS needs both the certificate "
                f"(--tls-cert FILE) and its private key (--tls-key FILE)"
            )
        return key

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (
            init_settings,
            env_settings,
            TomlConfigSettingsSource(settings_cls, toml_file=default_config_file()),
        )

    @property
    def resolved_cache_path(self) -> Path:
        return self.cache_path or (self.cache_dir / "cache.sqlite3")

    @property
    def resolved_kv_path(self) -> Path:
        """The folder of saved KV states: ``kv`` beside the result cache."""
        return self.resolved_cache_path.parent / "kv"

    @property
    def resolved_metrics_path(self) -> Path:
        return self.metrics_path or (self.cache_dir / "metrics.sqlite3")

    @property
    def daemon_url(self) -> str:
        if self.url:
            return self.url.rstrip("/")
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"
        scheme = "https" if self.tls_cert else "http"
        return f"{scheme}://{host}:{self.port}"


def load_settings(**overrides: Any) -> Settings:
    """Settings from flags (``overrides``), environment and config file, with one clear error."""
    try:
        return Settings(**{k: v for k, v in overrides.items() if v is not None})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'config'}: {err['msg']}"
            for err in exc.errors()
        )
        raise SettingsError(f"bad setting ({problems})") from exc
    except (OSError, ValueError) as exc:
        raise SettingsError(f"cannot read the config file {default_config_file()}: {exc}") from exc


def _flag_type(annotation: Any) -> Any:
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _flag_type(args[0]) if args else str
    return annotation if annotation in (int, float, str, Path, bool) else str


def add_setting_flags(parser: argparse.ArgumentParser, names: list[str] | None = None) -> None:
    """Add one ``--flag`` per setting (or per named setting), generated from the model."""
    group = parser.add_argument_group("settings (also ASSIST_* variables and the config file)")
    for name, info in Settings.model_fields.items():
        if names is not None and name not in names:
            continue
        flag = "--" + name.replace("_", "-")
        kind = _flag_type(info.annotation)
        if typing.get_origin(info.annotation) is list:
            group.add_argument(flag, action="append", default=None, help=info.description)
        elif kind is bool:
            group.add_argument(
                flag, action=argparse.BooleanOptionalAction, default=None, help=info.description
            )
        else:
            group.add_argument(flag, type=kind, default=None, help=info.description, dest=name)


def settings_from_args(args: argparse.Namespace) -> Settings:
    values = {name: getattr(args, name, None) for name in Settings.model_fields}
    return load_settings(**values)
