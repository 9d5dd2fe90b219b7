"""Reading manifests as a whole: ordering, the cap, several ecosystems at once, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from daemon.workspace.manifests import ECOSYSTEMS, MAX_FRAMEWORKS, ManifestInfo
from tests.unit.manifest_files import read, write


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
