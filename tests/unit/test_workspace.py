"""Workspace profiles of the fixture workspaces, root finding, and the watcher that keeps them
fresh."""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from daemon.protocol import WorkspaceProfile
from daemon.workspace.profile import (
    MANIFEST_NAMES,
    WorkspaceProfiler,
    compute_profile,
    find_workspace_root,
    is_manifest_name,
)

WORKSPACES = Path(__file__).resolve().parents[1] / "data" / "workspaces"


def fw(name: str, version: str | None, source: str) -> dict[str, Any]:
    return {"name": name, "version": version, "source": source}


def style(indent_style: str | None, indent_size: int | None, line_length: int | None) -> dict:
    return {"indent_style": indent_style, "indent_size": indent_size, "line_length": line_length}


EXPECTED: dict[str, tuple[str, dict[str, Any]]] = {
    "python": (
        "src/inventory/api.py",
        {
            "language": "python",
            "versions": {"python": ">=3.11"},
            "frameworks": [
                fw("fastapi", "0.110.2", "uv.lock"),
                fw("pydantic", "2.7.1", "uv.lock"),
                fw("sqlalchemy", "2.0.29", "uv.lock"),
                fw("httpx", "0.27.0", "uv.lock"),
                fw("pytest", "8.2.0", "uv.lock"),
                fw("python-dotenv", "1.0.1", "uv.lock"),
                fw("ruff", "0.4.4", "uv.lock"),
                fw("uvicorn", "0.29.0", "requirements.txt"),
                fw("gunicorn", "22.0.0", "requirements.txt"),
            ],
            "style": style("space", 4, 100),
            "tools": ["ruff"],
            "sources": [
                "pyproject.toml",
                ".python-version",
                "requirements.txt",
                "uv.lock",
                ".editorconfig",
            ],
        },
    ),
    "node": (
        "src/components/Cart.tsx",
        {
            "language": "typescriptreact",
            "versions": {"node": ">=20.11", "typescript": "5.4.5", "ts-target": "ES2022"},
            "frameworks": [
                fw("react", "18.3.1", "package-lock.json"),
                fw("next", "14.2.3", "package-lock.json"),
                fw("typescript", "5.4.5", "package-lock.json"),
                fw("vitest", "1.6.0", "package-lock.json"),
                fw("react-dom", "18.3.1", "package-lock.json"),
                fw("zod", "3.23.8", "package-lock.json"),
                fw("@types/react", "18.3.3", "package-lock.json"),
                fw("eslint", "8.57.0", "package-lock.json"),
            ],
            "style": style("space", 2, 100),
            "tools": ["eslint", "prettier"],
            "sources": [
                "package.json",
                "package-lock.json",
                "tsconfig.json",
                "tsconfig.base.json",
                ".prettierrc",
            ],
        },
    ),
    "go": (
        "cmd/ledger/main.go",
        {
            "language": "go",
            "versions": {"go": "1.22.1", "go-toolchain": "1.22.3"},
            "frameworks": [
                fw("github.com/gin-gonic/gin", "v1.10.0", "go.mod"),
                fw("github.com/jackc/pgx/v5", "v5.5.5", "go.mod"),
                fw("github.com/stretchr/testify", "v1.9.0", "go.mod"),
                fw("golang.org/x/sync", "v0.7.0", "go.mod"),
            ],
            "style": style("tab", None, None),
            "tools": ["gofmt"],
            "sources": ["go.mod"],
        },
    ),
    "rust": (
        "src/main.rs",
        {
            "language": "rust",
            "versions": {"rust-edition": "2021", "rust": "1.75", "rust-toolchain": "1.78.0"},
            "frameworks": [
                fw("axum", "0.7.5", "Cargo.lock"),
                fw("tokio", "1.37.0", "Cargo.lock"),
                fw("serde", "1.0.201", "Cargo.lock"),
                fw("serde_json", "1.0.117", "Cargo.lock"),
                fw("tracing", "0.1.40", "Cargo.lock"),
                fw("tower", "0.4.13", "Cargo.lock"),  # 0.5.0 is locked too, but not for "0.4"
            ],
            "style": style("space", 4, 110),
            "tools": ["rustfmt"],
            "sources": ["Cargo.toml", "rust-toolchain.toml", "Cargo.lock", "rustfmt.toml"],
        },
    ),
    "java-maven": (
        "src/main/java/com/example/orders/OrdersApplication.java",
        {
            "language": "java",
            "versions": {"java": "17"},
            "frameworks": [
                fw("org.springframework.boot:spring-boot-starter-parent", "3.2.5", "pom.xml"),
                fw("org.springframework.boot:spring-boot-starter-web", "3.2.5", "pom.xml"),
                fw("org.springframework.boot:spring-boot-starter-data-jpa", "3.2.5", "pom.xml"),
                fw("org.springframework.boot:spring-boot-starter-test", "3.2.5", "pom.xml"),
                fw("org.mapstruct:mapstruct", "1.5.5.Final", "pom.xml"),
                fw("org.postgresql:postgresql", None, "pom.xml"),
            ],
            "style": style("space", 4, None),  # no config: read from the file itself
            "tools": [],
            "sources": ["pom.xml"],
        },
    ),
    "java-gradle": (
        "src/main/java/com/example/orders/OrdersApplication.java",
        {
            "language": "java",
            "versions": {"java": "21", "kotlin": "1.9.23"},
            "frameworks": [
                fw(
                    "org.springframework.boot:spring-boot-starter-webflux",
                    "3.2.5",
                    "build.gradle.kts",
                ),
                fw(
                    "org.springframework.boot:spring-boot-starter-test", "3.2.5", "build.gradle.kts"
                ),
                fw("org.jetbrains.kotlinx:kotlinx-coroutines-reactor", "1.8.0", "build.gradle.kts"),
                fw(
                    "com.fasterxml.jackson.module:jackson-module-kotlin",
                    "2.17.0",
                    "build.gradle.kts",
                ),
                fw("org.testcontainers:junit-jupiter", "1.19.7", "build.gradle.kts"),
                fw("org.postgresql:r2dbc-postgresql", "1.0.5.RELEASE", "build.gradle.kts"),
            ],
            "style": style("space", 4, None),
            "tools": [],
            "sources": ["build.gradle.kts"],
        },
    ),
    "cpp": (
        "src/main.cpp",
        {
            "language": "cpp",
            "versions": {"c++": "20", "c": "11"},
            "frameworks": [
                fw("Boost", "1.83", "CMakeLists.txt"),
                fw("fmt", "10.2.1", "CMakeLists.txt"),
                fw("googletest", None, "CMakeLists.txt"),
            ],
            "style": style("space", 4, 100),
            "tools": ["clang-format"],
            "sources": ["src/CMakeLists.txt", "CMakeLists.txt", ".clang-format"],
        },
    ),
}


@pytest.mark.parametrize("ecosystem", sorted(EXPECTED))
def test_fixture_workspace_profile(ecosystem: str) -> None:
    relative, expected = EXPECTED[ecosystem]
    root = WORKSPACES / ecosystem
    profile = compute_profile(root, root / relative)
    assert profile.model_dump() == expected
    # What the daemon receives validates against the wire model.
    assert WorkspaceProfile.model_validate_json(profile.model_dump_json()) == profile


def test_profile_from_the_editor_buffer(tmp_path: Path) -> None:
    root = WORKSPACES / "java-maven"
    buffer = "class A {\n  void f() {\n    int x;\n  }\n}\n"  # unsaved text, 2-space indent
    profile = compute_profile(root, root / "src" / "New.java", text=buffer)
    assert profile.language == "java"
    assert profile.style.indent_size == 2


def test_language_id_decides_the_ecosystem() -> None:
    root = WORKSPACES / "python"
    profile = compute_profile(root, root / "src" / "inventory" / "notes", text="", language_id="py")
    assert profile.language == "python"
    assert profile.versions == {"python": ">=3.11"}


def test_unknown_language_gathers_every_ecosystem(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nrequires-python = ">=3.10"\n')
    (tmp_path / "package.json").write_text(json.dumps({"dependencies": {"express": "^4.19.2"}}))
    (tmp_path / "go.mod").write_text("module x\n\ngo 1.22\n")
    profile = compute_profile(tmp_path, tmp_path / "NOTES")
    assert profile.language is None
    assert profile.versions == {"python": ">=3.10", "go": "1.22"}
    assert [f.name for f in profile.frameworks] == ["express"]
    # A known language without an ecosystem gets none of them.
    markdown = compute_profile(tmp_path, tmp_path / "README.md")
    assert markdown.language == "markdown"
    assert markdown.versions == {} and markdown.frameworks == []


def test_workspace_profile_without_a_file() -> None:
    profile = compute_profile(WORKSPACES / "go", None)
    assert profile.language is None
    assert profile.versions == {"go": "1.22.1", "go-toolchain": "1.22.3"}


def test_monorepo_nearest_manifest_wins(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "package.json").write_text(json.dumps({"engines": {"node": ">=18"}}))
    web = tmp_path / "apps" / "web"
    web.mkdir(parents=True)
    (web / "package.json").write_text(
        json.dumps({"engines": {"node": ">=20"}, "dependencies": {"vue": "^3.4.0"}})
    )
    (web / "App.vue").write_text("<template><div/></template>\n")
    root = find_workspace_root(web / "App.vue")
    assert root == tmp_path
    profile = compute_profile(root, web / "App.vue")
    assert profile.versions == {"node": ">=20"}
    assert profile.sources == ["apps/web/package.json"]
    assert compute_profile(root, tmp_path / "tool.js").versions == {"node": ">=18"}


def test_symlinked_file_or_root_is_seen_inside_the_workspace(tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(WORKSPACES / "go", target_is_directory=True)
    real = WORKSPACES / "go" / "cmd" / "ledger" / "main.go"
    for root, file in ((link, real), (WORKSPACES / "go", link / "cmd" / "ledger" / "main.go")):
        profile = compute_profile(root, file)
        assert profile.versions == {"go": "1.22.1", "go-toolchain": "1.22.3"}
        assert profile.sources == ["go.mod"]


def test_garbage_everywhere_never_crashes(tmp_path: Path) -> None:
    for name in sorted(MANIFEST_NAMES):
        (tmp_path / name).write_bytes(b"\x00\xff garbage {[<" * 10)
    (tmp_path / "requirements.txt").write_text("===\n[[[\n")
    (tmp_path / "tsconfig.json").write_text("{")
    for file in ("a.py", "a.ts", "a.go", "a.rs", "A.java", "a.cpp", "a", "a.md"):
        profile = compute_profile(tmp_path, tmp_path / file, text="x = 1\n")
        assert profile.frameworks == []


# --- root finding and manifest names ------------------------------------------------------------


def test_find_workspace_root(tmp_path: Path) -> None:
    nested = tmp_path / "repo" / "pkg" / "src"
    nested.mkdir(parents=True)
    (tmp_path / "repo" / "pkg" / "pyproject.toml").write_text("[project]\n")
    # No version control: the nearest directory with a project manifest.
    assert find_workspace_root(nested / "mod.py") == tmp_path / "repo" / "pkg"
    (tmp_path / "repo" / ".git").mkdir()
    assert find_workspace_root(nested / "mod.py") == tmp_path / "repo"
    assert find_workspace_root(nested) == tmp_path / "repo"
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    if find_workspace_root(tmp_path) == tmp_path:  # nothing above tmp_path claims it
        assert find_workspace_root(lonely / "x.txt") == lonely


@pytest.mark.parametrize(
    "name",
    [
        "pyproject.toml",
        "uv.lock",
        "package.json",
        "pnpm-lock.yaml",
        "go.mod",
        "Cargo.lock",
        "pom.xml",
        "build.gradle.kts",
        "CMakeLists.txt",
        ".editorconfig",
        ".clang-format",
        "requirements-dev.txt",
        "tsconfig.app.json",
        ".prettierrc.yaml",
    ],
)
def test_manifest_names(name: str) -> None:
    assert is_manifest_name(name)


@pytest.mark.parametrize("name", ["main.py", "README.md", "package.jsonx", "go.sum", "notes.txt"])
def test_not_manifest_names(name: str) -> None:
    assert not is_manifest_name(name)


# --- the profiler and its watcher ---------------------------------------------------------------


def wait_for(condition: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@pytest.fixture
def python_copy(tmp_path: Path) -> Path:
    root = tmp_path / "python"
    shutil.copytree(WORKSPACES / "python", root)
    return root


def test_profiler_caches_per_directory_and_language(python_copy: Path) -> None:
    profiler = WorkspaceProfiler(python_copy)
    api = python_copy / "src" / "inventory" / "api.py"
    first = profiler.profile_for(api)
    assert first == compute_profile(python_copy, api)
    # Same directory and language: served from the cache, even for a file not on disk.
    (python_copy / "pyproject.toml").write_text('[project]\nrequires-python = ">=3.8"\n')
    other = profiler.profile_for(python_copy / "src" / "inventory" / "new.py", text="x = 1\n")
    assert other.versions == first.versions
    # Another language in that directory is computed on its own.
    readme = profiler.profile_for(python_copy / "src" / "inventory" / "README.md", text="# hi\n")
    assert readme.language == "markdown" and readme.versions == {}


def test_profiler_uses_each_documents_own_indentation(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nrequires-python = ">=3.11"\n')
    profiler = WorkspaceProfiler(tmp_path)
    folder = tmp_path / "src"
    two = profiler.profile_for(folder / "a.py", text="if x:\n  y = 1\n")
    four = profiler.profile_for(folder / "b.py", text="if x:\n    y = 1\n")
    assert (two.style.indent_size, four.style.indent_size) == (2, 4)


def test_watcher_sees_a_changed_manifest(python_copy: Path) -> None:
    profiler = WorkspaceProfiler(python_copy)
    refreshed = threading.Event()
    profiler.add_listener(refreshed.set)
    api = python_copy / "src" / "inventory" / "api.py"
    profiler.start()
    try:
        assert profiler.profile_for(api).versions["python"] == ">=3.11"
        generation = profiler.generation
        pyproject = python_copy / "pyproject.toml"
        pyproject.write_text(pyproject.read_text().replace(">=3.11", ">=3.12"))
        assert wait_for(lambda: profiler.profile_for(api).versions["python"] == ">=3.12")
        assert profiler.generation > generation
        assert refreshed.wait(5)
    finally:
        profiler.stop()


def test_watcher_sees_a_manifest_created_later(python_copy: Path) -> None:
    profiler = WorkspaceProfiler(python_copy)
    profiler.start()
    try:
        api = python_copy / "src" / "inventory" / "api.py"
        assert profiler.profile_for(api).versions == {"python": ">=3.11"}
        # A nearer pyproject.toml appears in the file's own directory.
        (api.parent / "pyproject.toml").write_text('[project]\nrequires-python = ">=3.13"\n')
        assert wait_for(lambda: profiler.profile_for(api).versions == {"python": ">=3.13"})
        (api.parent / "pyproject.toml").unlink()
        assert wait_for(lambda: profiler.profile_for(api).versions == {"python": ">=3.11"})
    finally:
        profiler.stop()


def test_watcher_ignores_other_files(python_copy: Path) -> None:
    profiler = WorkspaceProfiler(python_copy)
    profiler.start()
    try:
        api = python_copy / "src" / "inventory" / "api.py"
        profiler.profile_for(api)
        generation = profiler.generation
        (api.parent / "scratch.py").write_text("x = 1\n")
        api.write_text(api.read_text() + "\n# edited\n")
        time.sleep(0.5)
        assert profiler.generation == generation
    finally:
        profiler.stop()


def test_profiler_start_stop_are_safe_to_repeat(tmp_path: Path) -> None:
    profiler = WorkspaceProfiler(tmp_path)
    profiler.stop()  # never started: nothing to stop
    profiler.start()
    observer = profiler._observer
    profiler.start()  # already running: the same watcher, not a second one
    assert observer is not None and profiler._observer is observer and observer.is_alive()
    profile = profiler.profile_for(tmp_path / "missing" / "dir" / "a.py", text="x = 1\n")
    assert profile.language == "python"
    profiler.stop()
    profiler.stop()
    assert profiler._observer is None and not observer.is_alive()


# --- linters and formatters the workspace configures --------------------------------------------

PYPROJECT_DEV_GROUP = '[project]\nname = "x"\n[dependency-groups]\ndev = ["black>=24", "pytest"]\n'
POETRY_GROUP = '[tool.poetry.group.lint.dependencies]\nRuff = "^0.4"\n'


@pytest.mark.parametrize(
    ("files", "document", "expected"),
    [
        ({"ruff.toml": "line-length = 90\n"}, "a.py", ["ruff"]),
        ({".ruff.toml": ""}, "a.py", ["ruff"]),
        ({"pyproject.toml": "[tool.ruff.lint]\nselect = ['F']\n"}, "a.py", ["ruff"]),
        ({"pyproject.toml": "[tool.black]\nline-length = 100\n"}, "a.py", ["black"]),
        ({"pyproject.toml": PYPROJECT_DEV_GROUP}, "a.py", ["black"]),
        ({"pyproject.toml": POETRY_GROUP}, "a.py", ["ruff"]),
        ({"requirements-dev.txt": "-r requirements.txt\nruff==0.4.4  # lint\n"}, "a.py", ["ruff"]),
        ({"Pipfile": '[dev-packages]\nblack = "*"\n'}, "a.py", ["black"]),
        ({"package.json": json.dumps({"prettier": {"semi": False}})}, "a.js", ["prettier"]),
        ({"prettier.config.mjs": "export default {}\n"}, "a.ts", ["prettier"]),
        ({".prettierrc.yaml": "semi: false\n"}, "a.css", ["prettier"]),
        ({".eslintrc.json": "{}"}, "a.jsx", ["eslint"]),
        ({"eslint.config.js": "export default []\n"}, "a.ts", ["eslint"]),
        ({"package.json": json.dumps({"eslintConfig": {"root": True}})}, "a.js", ["eslint"]),
        (
            {"package.json": json.dumps({"devDependencies": {"eslint": "^9", "prettier": "3"}})},
            "a.tsx",
            ["eslint", "prettier"],
        ),
        ({".rustfmt.toml": "max_width = 90\n"}, "a.rs", ["rustfmt"]),
        ({"_clang-format": "BasedOnStyle: LLVM\n"}, "a.c", ["clang-format"]),
        ({"go.mod": "module x\n\ngo 1.22\n"}, "a.go", ["gofmt"]),
        ({}, "a.go", ["gofmt"]),  # Go code is gofmt'd, go.mod or not
        ({}, "a.py", []),
        ({"pyproject.toml": '[project]\ndependencies = ["ruffus", "blackjack"]\n'}, "a.py", []),
    ],
)
def test_tools_the_workspace_configures(
    tmp_path: Path, files: dict[str, str], document: str, expected: list[str]
) -> None:
    for name, content in files.items():
        (tmp_path / name).write_text(content)
    profile = compute_profile(tmp_path, tmp_path / document, text="")
    assert profile.tools == expected


def test_tools_are_those_of_the_documents_language(tmp_path: Path) -> None:
    (tmp_path / "ruff.toml").write_text("")
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\n[tool.black]\n")
    (tmp_path / "requirements.txt").write_text("ruff\nblack\n")
    (tmp_path / ".prettierrc").write_text("{}")
    (tmp_path / "package.json").write_text(json.dumps({"devDependencies": {"eslint": "9"}}))
    (tmp_path / "go.mod").write_text("module x\n")
    (tmp_path / ".clang-format").write_text("BasedOnStyle: Google\n")

    def tools(name: str) -> list[str]:
        return compute_profile(tmp_path, tmp_path / name, text="").tools

    assert tools("a.py") == ["black", "ruff"]  # sorted, each once
    assert tools("a.ts") == ["eslint", "prettier"]
    assert tools("README.md") == ["prettier"]
    assert tools("a.cpp") == ["clang-format"]
    assert tools("A.java") == []  # no Java section in .clang-format: it leaves Java alone
    assert tools("build.sh") == []
    # No language: everything the workspace configures.
    everything = ["black", "clang-format", "eslint", "gofmt", "prettier", "ruff"]
    assert compute_profile(tmp_path, tmp_path / "NOTES").tools == everything
    assert compute_profile(tmp_path, None).tools == everything


def test_clang_format_for_java_needs_a_java_section(tmp_path: Path) -> None:
    (tmp_path / ".clang-format").write_text("---\nLanguage: Java\nColumnLimit: 120\n")
    profile = compute_profile(tmp_path, tmp_path / "A.java", text="class A {}\n")
    assert profile.tools == ["clang-format"]


def test_tools_configured_above_the_package_count(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "ruff.toml").write_text("line-length = 100\n")
    (tmp_path / "package.json").write_text(json.dumps({"devDependencies": {"prettier": "3"}}))
    package = tmp_path / "packages" / "core"
    package.mkdir(parents=True)
    (package / "pyproject.toml").write_text('[project]\nname = "core"\n')
    (package / "package.json").write_text(json.dumps({"name": "web"}))
    (package / "eslint.config.js").write_text("export default []\n")
    python = compute_profile(tmp_path, package / "mod.py", text="")
    assert python.tools == ["ruff"]
    assert "ruff.toml" in python.sources
    script = compute_profile(tmp_path, package / "app.js", text="")
    assert script.tools == ["eslint", "prettier"]
    # The files that name a tool are sources of the profile.
    assert {"packages/core/eslint.config.js", "package.json"} <= set(script.sources)


def test_broken_tool_configs_never_crash(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ruff\n")
    (tmp_path / "package.json").write_text('{"devDependencies": ["eslint"]}')
    (tmp_path / "Pipfile").write_bytes(b"\xff\xfe garbage")
    (tmp_path / "requirements.txt").mkdir()  # a directory where a file was expected
    assert compute_profile(tmp_path, tmp_path / "a.py", text="").tools == []
    assert compute_profile(tmp_path, tmp_path / "a.js", text="").tools == []


@pytest.mark.parametrize(
    "name", ["eslint.config.mjs", ".eslintrc.yml", "prettier.config.cjs", "go.work", "Pipfile"]
)
def test_tool_config_names_are_watched(name: str) -> None:
    assert is_manifest_name(name)


def test_watcher_sees_a_tool_config_created_later(python_copy: Path) -> None:
    profiler = WorkspaceProfiler(python_copy)
    profiler.start()
    try:
        script = python_copy / "src" / "web" / "app.js"
        assert profiler.profile_for(script, text="").tools == []
        (python_copy / "eslint.config.js").write_text("export default []\n")
        assert wait_for(lambda: profiler.profile_for(script, text="").tools == ["eslint"])
    finally:
        profiler.stop()
