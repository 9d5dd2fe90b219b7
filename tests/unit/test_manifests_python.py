"""Python versions and frameworks: pyproject.toml, requirements files, Pipfile and lockfiles."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from daemon.workspace.manifests import normalize_python_name
from tests.unit.manifest_files import pins, read, write


def test_normalize_python_name() -> None:
    assert normalize_python_name("Flask_SQLAlchemy") == "flask-sqlalchemy"
    assert normalize_python_name("zope.interface") == "zope-interface"
    assert normalize_python_name("A--b__C") == "a-b-c"


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
