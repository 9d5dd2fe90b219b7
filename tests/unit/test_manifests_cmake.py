"""C and C++ standards and packages: CMakeLists.txt, vcpkg.json, conanfile.txt."""

from __future__ import annotations

import json
from pathlib import Path

from tests.unit.manifest_files import pins, read, write


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
