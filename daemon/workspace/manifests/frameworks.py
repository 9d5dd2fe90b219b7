"""Frameworks from direct dependencies: pinned to a version or range, and ranked by importance."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from daemon.protocol import Framework
from daemon.workspace.manifests.reader import Dep


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# Frameworks named first, in this order, because they shape the code most.
_KNOWN: dict[str, tuple[str, ...]] = {
    "python": _words(
        "django flask fastapi starlette pydantic sqlalchemy celery numpy pandas polars scipy"
        " scikit-learn torch tensorflow jax transformers aiohttp httpx requests pytest"
    ),
    "node": _words(
        "react next vue nuxt svelte @sveltejs/kit @angular/core solid-js express fastify"
        " @nestjs/core koa hono electron react-native typescript vite tailwindcss prisma jest"
        " vitest mocha @playwright/test"
    ),
    "go": _words(
        "github.com/gin-gonic/gin github.com/labstack/echo github.com/gofiber/fiber"
        " github.com/go-chi/chi github.com/gorilla/mux google.golang.org/grpc gorm.io/gorm"
        " github.com/jackc/pgx github.com/spf13/cobra github.com/stretchr/testify"
    ),
    "rust": _words(
        "actix-web axum rocket warp tokio async-std serde diesel sqlx tonic reqwest clap bevy"
        " tauri anyhow thiserror"
    ),
    "jvm": _words(
        "spring-boot spring quarkus micronaut ktor jakarta hibernate kotlinx-coroutines lombok"
        " jackson junit mockito"
    ),
    "cmake": _words(
        "boost qt eigen opencv abseil absl protobuf grpc fmt spdlog gtest googletest catch"
    ),
}


def version_or_range(spec: Any) -> str | None:
    """An exact pin as a bare version (==1.2 -> 1.2); any other requirement as written."""
    if spec is None:
        return None
    text = str(spec).strip()
    if not text or text == "*":
        return None
    exact = re.fullmatch(r"===?\s*([^\s,;*]+)", text)
    return exact.group(1) if exact else text


def known_rank(name: str, ecosystem: str) -> int | None:
    known = _KNOWN.get(ecosystem, ())
    if ecosystem == "go":
        key = re.sub(r"/v\d+$", "", name)
        return known.index(key) if key in known else None
    if ecosystem == "cmake":
        key = re.sub(r"\d+$", "", name.lower())
        return known.index(key) if key in known else None
    if ecosystem == "jvm":
        artifact = name.rsplit(":", 1)[-1]
        for i, k in enumerate(known):
            if artifact == k or artifact.startswith((k + "-", k + ".")):
                return i
        return None
    return known.index(name) if name in known else None


def pin_frameworks(
    deps: Iterable[Dep], ecosystem: str, pin: Callable[[Dep], tuple[str, str] | None]
) -> list[Framework]:
    """Frameworks from direct deps, each pinned by the lockfile when it can be."""
    seen: set[str] = set()
    result: list[Framework] = []
    for dep in deps:
        if dep.name in seen or not dep.name:
            continue
        seen.add(dep.name)
        pinned = pin(dep)
        version, source = pinned or (version_or_range(dep.spec), dep.source)
        result.append(
            Framework(name=dep.name[:200], version=version and version[:200], source=source)
        )
    return result


def no_pin(dep: Dep) -> tuple[str, str] | None:
    return None
