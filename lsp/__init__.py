"""The assist language server (pygls 2): completions, inline completions, quick fixes and
staged answers in any LSP editor, served by the shared assist daemon.

``lsp.factory`` builds the server (``lsp.server``) and registers the features (``lifecycle``,
``completion``, ``code_actions``, ``commands``), each with its own state."""
