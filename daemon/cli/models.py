"""``assist models``: the models assist knows by name, and the state of each on this machine.
Nothing is loaded or assembled; ``--json`` prints the same as JSON."""

from __future__ import annotations

from typing import Any

from daemon.cli.output import EXIT_OK, print_json
from daemon.settings import Settings
from models.catalog import (
    CATALOG,
    DEFAULT_MODEL,
    CatalogModel,
    assembled_path,
    is_assembled,
    is_installed,
)


def human_size(size: int) -> str:
    """Bytes as people read them: ``469 MiB``, ``1.2 GiB``."""
    value = float(size)
    for unit in ("bytes", "KiB", "MiB"):
        if value < 1024:
            return f"{value:.0f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


def describe(model: CatalogModel, settings: Settings) -> dict[str, Any]:
    return {
        "name": model.name,
        "title": model.title,
        "default": model.name == DEFAULT_MODEL,
        "configured": model.name == settings.model,
        "installed": is_installed(model),
        "assembled": is_assembled(model, settings.cache_dir),
        "path": str(assembled_path(model, settings.cache_dir)),
        "prompt_format": model.prompt_format,
        "size_bytes": model.size,
        "size": human_size(model.size),
        "sha256": model.sha256,
        "licence": model.licence,
        "licence_url": model.licence_url,
        "origin": model.origin,
        "packages": list(model.requirements),
    }


def _yes(value: bool) -> str:
    return "yes" if value else "no"


def run_models(settings: Settings, as_json: bool) -> int:
    rows = [describe(model, settings) for model in CATALOG.values()]
    if as_json:
        print_json(
            {
                "default": DEFAULT_MODEL,
                "configured": settings.model,
                "model_path": str(settings.model_path) if settings.model_path else None,
                "models": rows,
            }
        )
        return EXIT_OK
    table = [["NAME", "", "INSTALLED", "ASSEMBLED", "FORMAT", "SIZE", "LICENCE", "TITLE"]]
    for row in rows:
        marks = [mark for mark in ("default", "configured") if row[mark]]
        table.append(
            [
                row["name"],
                ", ".join(marks),
                _yes(row["installed"]),
                _yes(row["assembled"]),
                row["prompt_format"],
                row["size"],
                row["licence"],
                row["title"],
            ]
        )
    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]))]
    for line in table:
        cells = (cell.ljust(width) for cell, width in zip(line, widths, strict=True))
        print("  ".join(cells).rstrip())
    print()
    if settings.model_path:
        print(f"model_path is set: assist loads {settings.model_path} instead of a named model.")
    else:
        other = next(name for name in CATALOG if name != settings.model)
        print(
            f"assist loads {settings.model}; choose another with `assist serve --model {other}`, "
            f'ASSIST_MODEL={other} or `model = "{other}"` in the config file.'
        )
    missing = [row for row in rows if not row["installed"]]
    if missing:
        print("Install the models with `pip install 'assist[model]'`.")
    print(f"Assembled models live in {settings.cache_dir / 'models'}.")
    return EXIT_OK
