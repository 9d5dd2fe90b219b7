"""The assist language server (pygls 2): completions, inline completions, quick fixes and
staged answers in any LSP editor, served by the shared assist daemon."""
