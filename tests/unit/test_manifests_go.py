"""Go versions and frameworks from go.mod."""

from __future__ import annotations

from pathlib import Path

from tests.unit.manifest_files import pins, read, write


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
