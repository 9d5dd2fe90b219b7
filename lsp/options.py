"""The language server's settings, from ``initializationOptions`` and ``workspace/configuration``.
Each is parsed on its own: a bad value falls back to its default with a message naming it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from daemon.settings import check_ca_file


class AssistOptions(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    daemon_url: str | None = Field(
        None, description="The daemon's URL; unset means the local default, started as needed."
    )
    autostart: bool = Field(True, description="Start the local daemon when none answers.")
    token: str | None = Field(None, description="Token for a daemon that requires one.")
    ca: str | None = Field(
        None,
        description="PEM certificate of the CA that signed an https:// daemon's certificate "
        "(a private CA); the system's CAs when unset.",
    )
    debounce_ms: int = Field(75, ge=0, le=5000, description="Wait for typing to pause (ms).")
    max_tokens: int | None = Field(None, ge=1, le=1024, description="Tokens per completion.")
    inline_completion: bool = Field(True, description="Answer textDocument/inlineCompletion.")
    completion_items: bool = Field(True, description="Answer textDocument/completion.")
    stage_notifications: bool = Field(True, description="Send assist/stage notifications.")
    fix_candidates: int | None = Field(None, ge=1, le=16, description="Model candidates per fix.")
    context: bool = Field(
        True,
        description="Send snippets of the rest of the workspace with completions: what the "
        "document imports, and the lines around recent edits in other documents.",
    )
    log_level: Literal["error", "warning", "info", "debug"] = "info"

    @field_validator("ca")
    @classmethod
    def _readable_ca(cls, ca: str | None) -> str | None:
        return str(check_ca_file(Path(ca))) if ca else None


def parse_options(raw: Any, base: AssistOptions | None = None) -> tuple[AssistOptions, list[str]]:
    """Options from a client's JSON (camelCase or snake_case), with one message per bad value.
    Each setting is parsed on its own, so one typo does not turn the others off."""
    options = base or AssistOptions()
    if raw is None:
        return options, []
    if not isinstance(raw, dict):
        return options, [
            f"assist settings must be an object, not {type(raw).__name__}; using defaults"
        ]
    if isinstance(raw.get("assist"), dict):
        raw = raw["assist"]
    values = options.model_dump()
    problems: list[str] = []
    fields = AssistOptions.model_fields
    by_alias = {info.alias or name: name for name, info in fields.items()}
    for key, value in raw.items():
        name = by_alias.get(key, key if key in fields else None)
        if name is None:
            continue
        try:
            checked = AssistOptions.model_validate({**values, name: value})
        except ValidationError as exc:
            reason = exc.errors()[0]["msg"]
            default = fields[name].default
            problems.append(
                f"assist setting {key}={value!r} is invalid ({reason}); using {default!r}"
            )
            continue
        values[name] = getattr(checked, name)
    return AssistOptions.model_validate(values), problems
