"""The small parsers the manifest readers share: JSON with comments and simple YAML."""

from __future__ import annotations

import json

from daemon.workspace.manifests import parse_simple_yaml, strip_json_comments


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
