"""Versions and frameworks from manifests and lockfiles, one ecosystem and format at a time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from daemon.manifests import (
    ECOSYSTEMS,
    MAX_FRAMEWORKS,
    ManifestInfo,
    normalize_python_name,
    parse_simple_yaml,
    read_manifests,
    strip_json_comments,
)


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


def read(root: Path, ecosystem: str | tuple[str, ...], start: str = ".") -> ManifestInfo:
    """What the readers see for a file in ``start`` (relative to root)."""
    directory = (root / start).resolve()
    root = root.resolve()
    dirs = [directory]
    while dirs[-1] != root:
        dirs.append(dirs[-1].parent)
    ecosystems = (ecosystem,) if isinstance(ecosystem, str) else ecosystem
    return read_manifests(ecosystems, dirs, root)


def pins(info: ManifestInfo) -> list[tuple[str, str | None, str | None]]:
    return [(f.name, f.version, f.source) for f in info.frameworks]


# --- helpers ------------------------------------------------------------------------------------


def test_normalize_python_name() -> None:
    assert normalize_python_name("Flask_SQLAlchemy") == "flask-sqlalchemy"
    assert normalize_python_name("zope.interface") == "zope-interface"
    assert normalize_python_name("A--b__C") == "a-b-c"


def test_strip_json_comments_keeps_strings() -> None:
    text = """{
      // a comment
      "url": "https://example.com/*not a comment*/", /* block */
      "list": [1, 2,],
      "escaped": "quote \\" // still string",
      "comma": "a, }",
    }"""
    assert json.loads(strip_json_comments(text)) == {
        "url": "https://example.com/*not a comment*/",
        "list": [1, 2],
        "escaped": 'quote " // still string',
        "comma": "a, }",
    }


def test_parse_simple_yaml() -> None:
    text = """# comment
lockfileVersion: '9.0'
settings:
  autoInstallPeers: true
importers:
  .:
    dependencies:
      '@scope/pkg':
        specifier: ^1.0.0
        version: 1.2.3(react@18.2.0)
list:
  - one
  - two
printWidth: 100 # trailing comment
"""
    data = parse_simple_yaml(text)
    assert data["lockfileVersion"] == "9.0"
    assert data["settings"] == {"autoInstallPeers": True}
    assert data["importers"]["."]["dependencies"]["@scope/pkg"]["version"] == "1.2.3(react@18.2.0)"
    assert data["printWidth"] == 100


# --- Python -------------------------------------------------------------------------------------


def test_poetry_project_with_lock(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": """
[tool.poetry]
name = "shop"
version = "1.0.0"

[tool.poetry.dependencies]
python = "^3.10"
Django = "^5.0"
celery = { version = "^5.3", extras = ["redis"] }
requests = [{ version = "^2.31", python = ">=3.10" }]

[tool.poetry.group.dev.dependencies]
pytest = "^8.0"
""",
            "poetry.lock": """
[[package]]
name = "django"
version = "5.0.4"
description = "A high-level Python web framework"
optional = false
python-versions = ">=3.10"

[[package]]
name = "celery"
version = "5.3.6"

[[package]]
name = "pytest"
version = "8.1.1"

[metadata]
lock-version = "2.0"
python-versions = "^3.10"
""",
        },
    )
    info = read(tmp_path, "python")
    assert info.versions == {"python": "^3.10"}
    assert pins(info) == [
        ("django", "5.0.4", "poetry.lock"),
        ("celery", "5.3.6", "poetry.lock"),
        ("requests", "^2.31", "pyproject.toml"),
        ("pytest", "8.1.1", "poetry.lock"),
    ]
    assert info.sources == ["pyproject.toml", "poetry.lock"]


def test_pipfile_and_pipfile_lock(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "Pipfile": """
[[source]]
url = "https://pypi.org/simple"
verify_ssl = true
name = "pypi"

[packages]
flask = "*"
numpy = ">=1.26"

[dev-packages]
pytest = "*"

[requires]
python_version = "3.11"
""",
            "Pipfile.lock": json.dumps(
                {
                    "_meta": {"requires": {"python_version": "3.11"}},
                    "default": {"flask": {"version": "==3.0.3"}, "numpy": {"version": "==1.26.4"}},
                    "develop": {"pytest": {"version": "==8.2.0"}},
                }
            ),
        },
    )
    info = read(tmp_path, "python")
    assert info.versions == {"python": "3.11"}
    assert pins(info) == [
        ("flask", "3.0.3", "Pipfile.lock"),
        ("numpy", "1.26.4", "Pipfile.lock"),
        ("pytest", "8.2.0", "Pipfile.lock"),
    ]


def test_pdm_lock(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "x"\ndependencies = ["pandas>=2"]\n',
            "pdm.lock": '[metadata]\ngroups = ["default"]\n\n'
            '[[package]]\nname = "pandas"\nversion = "2.2.2"\n',
        },
    )
    assert pins(read(tmp_path, "python")) == [("pandas", "2.2.2", "pdm.lock")]


def test_requirements_syntax_without_lock(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "requirements.txt": """# app
-r requirements-base.txt
--index-url https://pypi.org/simple
Flask_SQLAlchemy==3.1.1
Django>=4.2,<5 ; python_version >= "3.10"
requests[socks] ~= 2.31  # comment
torch @ https://download.pytorch.org/whl/cpu/torch-2.3.0.whl
numpy==1.26.4 \\
    --hash=sha256:abc
git+https://github.com/org/repo.git#egg=thing
./local/package
""",
            "requirements-dev.txt": "pytest==8.2.0\n",
        },
    )
    info = read(tmp_path, "python")
    assert pins(info) == [
        ("django", ">=4.2,<5", "requirements.txt"),
        ("numpy", "1.26.4", "requirements.txt"),
        ("torch", None, "requirements.txt"),
        ("requests", "~= 2.31", "requirements.txt"),
        ("pytest", "8.2.0", "requirements-dev.txt"),
        ("flask-sqlalchemy", "3.1.1", "requirements.txt"),
    ]
    assert info.sources == ["requirements.txt", "requirements-dev.txt"]


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({".python-version": "3.12.3\n"}, "3.12.3"),
        ({".python-version": "# pyenv\n3.11\n3.10\n"}, "3.11"),
        ({"runtime.txt": "python-3.11.9\n"}, "3.11.9"),
        ({".python-version": "3.12\n", "runtime.txt": "python-3.11.9\n"}, "3.12"),
        (
            {".python-version": "3.12\n", "pyproject.toml": '[project]\nrequires-python=">=3.9"\n'},
            ">=3.9",
        ),
    ],
)
def test_python_version_sources(tmp_path: Path, files: dict[str, str], expected: str) -> None:
    write(tmp_path, files)  # type: ignore[arg-type]
    assert read(tmp_path, "python").versions == {"python": expected}


def test_nearest_manifest_wins_and_lock_is_found_above(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": '[project]\nrequires-python = ">=3.9"\ndependencies = ["flask"]\n',
            "uv.lock": 'version = 1\n\n[[package]]\nname = "fastapi"\nversion = "0.111.0"\n',
            "services/api/pyproject.toml": '[project]\nrequires-python = ">=3.12"\n'
            'dependencies = ["fastapi>=0.110"]\n',
            "services/api/app/main.py": "",
        },
    )
    info = read(tmp_path, "python", "services/api/app")
    assert info.versions == {"python": ">=3.12"}
    assert pins(info) == [("fastapi", "0.111.0", "uv.lock")]
    assert info.sources == ["services/api/pyproject.toml", "uv.lock"]


# --- Node ---------------------------------------------------------------------------------------

PACKAGE_JSON = json.dumps(
    {
        "name": "web",
        "dependencies": {"react": "^18.2.0", "@tanstack/react-query": "^5.0.0"},
        "devDependencies": {"typescript": "~5.3.3", "jest": "^29.7.0"},
    }
)


def test_typescript_range_and_node_version_without_lock(tmp_path: Path) -> None:
    write(tmp_path, {"package.json": PACKAGE_JSON, ".nvmrc": "v20.12.2\n"})
    info = read(tmp_path, "node")
    assert info.versions == {"node": "20.12.2", "typescript": "~5.3.3"}
    assert pins(info) == [
        ("react", "^18.2.0", "package.json"),
        ("typescript", "~5.3.3", "package.json"),
        ("jest", "^29.7.0", "package.json"),
        ("@tanstack/react-query", "^5.0.0", "package.json"),
    ]


def test_node_version_file(tmp_path: Path) -> None:
    write(tmp_path, {"package.json": "{}", ".node-version": "18.19.0\n"})
    assert read(tmp_path, "node").versions == {"node": "18.19.0"}


def test_yarn_classic_lock(tmp_path: Path) -> None:
    lock = """# THIS IS AN AUTOGENERATED FILE. DO NOT EDIT THIS FILE DIRECTLY.
# yarn lockfile v1


"@tanstack/react-query@^5.0.0":
  version "5.40.0"
  resolved "https://registry.yarnpkg.com/@tanstack/react-query/-/react-query-5.40.0.tgz"

jest@^29.7.0:
  version "29.7.0"

react@^17.0.0:
  version "17.0.2"

react@^18.0.0, react@^18.2.0:
  version "18.3.1"
  dependencies:
    loose-envify "^1.1.0"

typescript@~5.3.3:
  version "5.3.3"
"""
    write(tmp_path, {"package.json": PACKAGE_JSON, "yarn.lock": lock})
    info = read(tmp_path, "node")
    assert info.versions == {"typescript": "5.3.3"}
    assert pins(info) == [
        ("react", "18.3.1", "yarn.lock"),
        ("typescript", "5.3.3", "yarn.lock"),
        ("jest", "29.7.0", "yarn.lock"),
        ("@tanstack/react-query", "5.40.0", "yarn.lock"),
    ]


def test_yarn_berry_lock(tmp_path: Path) -> None:
    lock = """# This file is generated by running "yarn install" inside your project.

__metadata:
  version: 8
  cachekey: 10c0

"@tanstack/react-query@npm:^5.0.0":
  version: 5.40.0
  resolution: "@tanstack/react-query@npm:5.40.0"

"react@npm:^18.2.0":
  version: 18.3.1
  resolution: "react@npm:18.3.1"

"typescript@patch:typescript@npm%3A~5.3.3#optional!builtin<compat/typescript>":
  version: 5.3.3

"typescript@npm:~5.3.3":
  version: 5.3.3
"""
    write(tmp_path, {"package.json": PACKAGE_JSON, "yarn.lock": lock})
    assert pins(read(tmp_path, "node")) == [
        ("react", "18.3.1", "yarn.lock"),
        ("typescript", "5.3.3", "yarn.lock"),
        ("jest", "^29.7.0", "package.json"),
        ("@tanstack/react-query", "5.40.0", "yarn.lock"),
    ]


PNPM_V9 = """lockfileVersion: '9.0'

settings:
  autoInstallPeers: true
  excludeLinksFromLockfile: false

importers:

  .:
    dependencies:
      '@tanstack/react-query':
        specifier: ^5.0.0
        version: 5.40.0(react@18.3.1)
      react:
        specifier: ^18.2.0
        version: 18.3.1
    devDependencies:
      typescript:
        specifier: ~5.3.3
        version: 5.3.3

  packages/ui:
    dependencies:
      react:
        specifier: ^17.0.0
        version: 17.0.2

packages:

  react@18.3.1:
    resolution: {integrity: sha512-abc}

snapshots:

  react@18.3.1: {}
"""

PNPM_V6 = """lockfileVersion: '6.0'

dependencies:
  react:
    specifier: ^18.2.0
    version: 18.2.0

devDependencies:
  jest:
    specifier: ^29.7.0
    version: 29.7.0(@types/node@20.12.7)

packages:

  /react@18.2.0:
    resolution: {integrity: sha512-abc}
"""

PNPM_V5 = """lockfileVersion: 5.4

specifiers:
  react: ^18.2.0
  typescript: ~5.3.3

dependencies:
  react: 18.2.0

devDependencies:
  typescript: 5.3.3_@types+node@20.12.7

packages:

  /react/18.2.0:
    resolution: {integrity: sha512-abc}
"""


@pytest.mark.parametrize(
    ("lock", "expected"),
    [
        (PNPM_V9, {"react": "18.3.1", "typescript": "5.3.3", "@tanstack/react-query": "5.40.0"}),
        (PNPM_V6, {"react": "18.2.0", "jest": "29.7.0"}),
        (PNPM_V5, {"react": "18.2.0", "typescript": "5.3.3"}),
    ],
)
def test_pnpm_lock_versions(tmp_path: Path, lock: str, expected: dict[str, str]) -> None:
    write(tmp_path, {"package.json": PACKAGE_JSON, "pnpm-lock.yaml": lock})
    pinned = {
        f.name: f.version for f in read(tmp_path, "node").frameworks if f.source != "package.json"
    }
    assert pinned == expected


def test_pnpm_workspace_importer(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "package.json": "{}",
            "pnpm-lock.yaml": PNPM_V9,
            "packages/ui/package.json": json.dumps({"dependencies": {"react": "^17.0.0"}}),
        },
    )
    assert pins(read(tmp_path, "node", "packages/ui")) == [("react", "17.0.2", "pnpm-lock.yaml")]


def test_package_lock_v1(tmp_path: Path) -> None:
    lock = {
        "name": "web",
        "lockfileVersion": 1,
        "dependencies": {
            "react": {"version": "16.14.0"},
            "jest": {"version": "26.6.3", "dev": True},
        },
    }
    write(tmp_path, {"package.json": PACKAGE_JSON, "package-lock.json": json.dumps(lock)})
    assert pins(read(tmp_path, "node"))[:3] == [
        ("react", "16.14.0", "package-lock.json"),
        ("typescript", "~5.3.3", "package.json"),
        ("jest", "26.6.3", "package-lock.json"),
    ]


def test_package_lock_workspace_prefers_the_member_copy(tmp_path: Path) -> None:
    lock = {
        "lockfileVersion": 3,
        "packages": {
            "": {"workspaces": ["apps/*"]},
            "apps/legacy": {"dependencies": {"react": "^17.0.0"}},
            "apps/legacy/node_modules/react": {"version": "17.0.2"},
            "node_modules/react": {"version": "18.3.1"},
        },
    }
    write(
        tmp_path,
        {
            "package.json": json.dumps({"workspaces": ["apps/*"]}),
            "package-lock.json": json.dumps(lock),
            "apps/legacy/package.json": json.dumps({"dependencies": {"react": "^17.0.0"}}),
            "apps/modern/package.json": json.dumps({"dependencies": {"react": "^18.2.0"}}),
        },
    )
    assert pins(read(tmp_path, "node", "apps/legacy")) == [("react", "17.0.2", "package-lock.json")]
    assert pins(read(tmp_path, "node", "apps/modern")) == [("react", "18.3.1", "package-lock.json")]


def test_tsconfig_target_and_extends(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "package.json": "{}",
            "tsconfig.json": '{\n  // app\n  "extends": "./configs/base",\n'
            '  "include": ["src"],\n}\n',
            "configs/base.json": '{ "compilerOptions": { "target": "es2021", /* node 16 */ }, }',
        },
    )
    info = read(tmp_path, "node")
    assert info.versions == {"ts-target": "es2021"}
    assert info.sources == ["package.json", "tsconfig.json", "configs/base.json"]


def test_tsconfig_own_target_wins_and_extends_is_followed_once(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "tsconfig.json": '{"extends": "./a.json", "compilerOptions": {"target": "ES2020"}}',
            "a.json": '{"extends": "./b.json"}',
            "b.json": '{"compilerOptions": {"target": "ES5"}}',
        },
    )
    assert read(tmp_path, "node").versions == {"ts-target": "ES2020"}
    write(tmp_path, {"tsconfig.json": '{"extends": "./a.json"}'})
    assert read(tmp_path, "node").versions == {}  # a.json has no target; b.json is two hops away


# --- Go -----------------------------------------------------------------------------------------


def test_go_mod_single_line_requires(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "go.mod": """module example.com/tool

go 1.21

require github.com/spf13/cobra v1.8.0
require golang.org/x/text v0.14.0 // indirect
require (
\tgithub.com/labstack/echo/v4 v4.12.0 // the web framework
)
replace (
\texample.com/old => ../old
)
""",
        },
    )
    info = read(tmp_path, "go")
    assert info.versions == {"go": "1.21"}
    assert pins(info) == [
        ("github.com/labstack/echo/v4", "v4.12.0", "go.mod"),
        ("github.com/spf13/cobra", "v1.8.0", "go.mod"),
    ]


# --- Rust ---------------------------------------------------------------------------------------


def test_cargo_workspace_inheritance(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "Cargo.toml": """
[workspace]
members = ["crates/*"]
resolver = "2"

[workspace.package]
edition = "2021"
rust-version = "1.74"

[workspace.dependencies]
serde = { version = "1.0", features = ["derive"] }
rand = "0.8"
""",
            "Cargo.lock": """version = 3

[[package]]
name = "rand"
version = "0.7.3"

[[package]]
name = "rand"
version = "0.8.5"

[[package]]
name = "serde"
version = "1.0.203"
""",
            "crates/core/Cargo.toml": """
[package]
name = "core"
version = "0.1.0"
edition.workspace = true
rust-version.workspace = true

[dependencies]
serde = { workspace = true }
rand.workspace = true
my-log = { package = "log", version = "0.4" }
""",
            "rust-toolchain": "nightly-2024-05-01\n",
        },
    )
    info = read(tmp_path, "rust", "crates/core/src")
    assert info.versions == {
        "rust-edition": "2021",
        "rust": "1.74",
        "rust-toolchain": "nightly-2024-05-01",
    }
    assert pins(info) == [
        ("serde", "1.0.203", "Cargo.lock"),
        ("rand", "0.8.5", "Cargo.lock"),
        ("log", "0.4", "crates/core/Cargo.toml"),
    ]


def test_virtual_workspace_lists_workspace_dependencies(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "Cargo.toml": '[workspace]\nmembers = []\n[workspace.dependencies]\ntokio = "1"\n',
        },
    )
    assert pins(read(tmp_path, "rust")) == [("tokio", "1", "Cargo.toml")]


# --- JVM ----------------------------------------------------------------------------------------


def test_maven_properties_bom_and_release(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pom.xml": """<?xml version="1.0"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.acme</groupId>
  <artifactId>svc</artifactId>
  <version>2.1.0</version>
  <properties>
    <maven.compiler.source>11</maven.compiler.source>
    <maven.compiler.release>${jdk}</maven.compiler.release>
    <jdk>21</jdk>
    <quarkus.platform.version>3.10.0</quarkus.platform.version>
    <kotlin.version>1.9.24</kotlin.version>
  </properties>
  <dependencyManagement>
    <dependencies>
      <dependency>
        <groupId>io.quarkus.platform</groupId>
        <artifactId>quarkus-bom</artifactId>
        <version>${quarkus.platform.version}</version>
        <type>pom</type>
        <scope>import</scope>
      </dependency>
      <dependency>
        <groupId>org.junit.jupiter</groupId>
        <artifactId>junit-jupiter</artifactId>
        <version>5.10.2</version>
      </dependency>
    </dependencies>
  </dependencyManagement>
  <dependencies>
    <dependency>
      <groupId>com.acme</groupId>
      <artifactId>common</artifactId>
      <version>${project.version}</version>
    </dependency>
    <dependency>
      <groupId>io.quarkus.platform</groupId>
      <artifactId>quarkus-rest</artifactId>
    </dependency>
    <dependency>
      <groupId>org.junit.jupiter</groupId>
      <artifactId>junit-jupiter</artifactId>
      <scope>test</scope>
    </dependency>
    <dependency>
      <groupId>org.example</groupId>
      <artifactId>unresolved</artifactId>
      <version>${missing.property}</version>
    </dependency>
  </dependencies>
</project>
""",
        },
    )
    info = read(tmp_path, "jvm")
    assert info.versions == {"java": "21", "kotlin": "1.9.24"}
    assert pins(info) == [
        ("io.quarkus.platform:quarkus-rest", "3.10.0", "pom.xml"),
        ("org.junit.jupiter:junit-jupiter", "5.10.2", "pom.xml"),
        ("com.acme:common", "2.1.0", "pom.xml"),
        ("org.example:unresolved", None, "pom.xml"),
    ]


def test_gradle_groovy_dsl(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "build.gradle": """
plugins {
    id 'java'
    id 'org.jetbrains.kotlin.jvm' version '1.9.0'
}

java {
    sourceCompatibility = JavaVersion.VERSION_1_8
}

dependencies {
    implementation 'com.google.guava:guava:33.2.0-jre'
    implementation group: 'io.micronaut', name: 'micronaut-http', version: '4.4.0'
    implementation platform("io.micronaut.platform:micronaut-platform:${micronautVersion}")
    testImplementation "org.mockito:mockito-core:$mockitoVersion"
}
""",
            "gradle.properties": "micronautVersion=4.4.2\nmockitoVersion=5.11.0\n",
        },
    )
    info = read(tmp_path, "jvm")
    assert info.versions == {"java": "1.8", "kotlin": "1.9.0"}
    assert pins(info) == [
        ("io.micronaut:micronaut-http", "4.4.0", "build.gradle"),
        ("io.micronaut.platform:micronaut-platform", "4.4.2", "build.gradle"),
        ("org.mockito:mockito-core", "5.11.0", "build.gradle"),
        ("com.google.guava:guava", "33.2.0-jre", "build.gradle"),
    ]
    assert info.sources == ["build.gradle", "gradle.properties"]


@pytest.mark.parametrize(
    ("snippet", "expected"),
    [
        ("kotlin { jvmToolchain(17) }", "17"),
        ("java { sourceCompatibility = JavaVersion.VERSION_11 }", "11"),
        ('java.sourceCompatibility = "17"', "17"),
        ('kotlinOptions { jvmTarget = "1.8" }', "1.8"),
        ("compilerOptions { jvmTarget.set(JvmTarget.JVM_21) }", "21"),
    ],
)
def test_gradle_java_version(tmp_path: Path, snippet: str, expected: str) -> None:
    write(tmp_path, {"build.gradle.kts": snippet + "\n"})
    assert read(tmp_path, "jvm").versions == {"java": expected}


# --- CMake --------------------------------------------------------------------------------------


def test_cmake_standards_vcpkg_and_conan(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "CMakeLists.txt": """cmake_minimum_required(VERSION 3.20)
project(app C CXX)
#[[ set(CMAKE_CXX_STANDARD 11) ]]
set_target_properties(app PROPERTIES CXX_STANDARD 17)
target_compile_features(lib PUBLIC c_std_99)
find_package(Qt6 6.5 REQUIRED COMPONENTS Widgets)
find_package(Threads REQUIRED)
""",
            "vcpkg.json": json.dumps(
                {
                    "name": "app",
                    "dependencies": ["spdlog", {"name": "eigen3", "version>=": "3.4.0"}],
                }
            ),
            "conanfile.txt": "[requires]\nzlib/1.3.1\nboost/1.85.0@user/stable\n\n"
            "[generators]\nCMakeDeps\n",
        },
    )
    info = read(tmp_path, "cmake")
    assert info.versions == {"c++": "17", "c": "99"}
    assert pins(info) == [
        ("boost", "1.85.0", "conanfile.txt"),
        ("Qt6", "6.5", "CMakeLists.txt"),
        ("eigen3", "3.4.0", "vcpkg.json"),
        ("spdlog", None, "vcpkg.json"),
        ("zlib", "1.3.1", "conanfile.txt"),
    ]


# --- Ordering, caps and bad input ---------------------------------------------------------------


def test_well_known_first_then_manifest_order_and_cap(tmp_path: Path) -> None:
    others = [f"lib{i:02d}" for i in range(30)]
    deps = [*others[:3], "pytest", "numpy", *others[3:], "django"]
    write(tmp_path, {"requirements.txt": "\n".join(deps) + "\n"})
    names = [f.name for f in read(tmp_path, "python").frameworks]
    assert len(names) == MAX_FRAMEWORKS
    assert names[:5] == ["django", "numpy", "pytest", "lib00", "lib01"]
    assert names[-1] == "lib20"


def test_all_ecosystems_together(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": '[project]\nrequires-python = ">=3.11"\ndependencies = ["flask"]\n',
            "package.json": json.dumps(
                {"engines": {"node": "20"}, "dependencies": {"express": "4"}}
            ),
            "go.mod": "module x\n\ngo 1.22\n",
        },
    )
    info = read(tmp_path, ECOSYSTEMS)
    assert info.versions == {"python": ">=3.11", "node": "20", "go": "1.22"}
    assert [f.name for f in info.frameworks] == ["flask", "express"]


@pytest.mark.parametrize(
    "files",
    [
        {
            "pyproject.toml": "[project\nname = ",
            "package.json": "{not json",
            "pom.xml": "<project>",
        },
        {"pyproject.toml": b"\x00\x01\x02binary", "package.json": b"\xff\xfe\x00"},
        {"Cargo.toml": "[package]\nedition = 2021\n[dependencies]\nx = 5\n", "go.mod": "go"},
        {"package.json": "[1, 2, 3]", "tsconfig.json": '"just a string"', "Pipfile": "a = 1"},
        {
            "uv.lock": "version = 1\npackage = 3\n",
            "pyproject.toml": '[project]\ndependencies = "x"',
        },
        {
            "build.gradle": "implementation(",
            "CMakeLists.txt": "set(CMAKE_CXX_STANDARD",
            "yarn.lock": ":",
        },
    ],
)
def test_bad_files_are_skipped(tmp_path: Path, files: dict[str, str | bytes]) -> None:
    write(tmp_path, files)
    info = read(tmp_path, ECOSYSTEMS)  # must not raise
    assert isinstance(info, ManifestInfo)


def test_bad_manifest_does_not_hide_the_others(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": "[project", ".python-version": "3.12\n"})
    info = read(tmp_path, "python")
    assert info.versions == {"python": "3.12"}
    assert info.sources == [".python-version"]


def test_huge_files_are_skipped(tmp_path: Path) -> None:
    padding = "#" * (1 << 20) + "\n"
    write(tmp_path, {"pyproject.toml": '[project]\nrequires-python = ">=3.8"\n' + padding})
    assert read(tmp_path, "python").versions == {}


def test_directories_named_like_manifests_are_ignored(tmp_path: Path) -> None:
    (tmp_path / "package.json").mkdir()
    (tmp_path / "go.mod").mkdir()
    assert read(tmp_path, ECOSYSTEMS) == ManifestInfo()
