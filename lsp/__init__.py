"""The assist language server (pygls 2), served by the shared assist daemon.
``lsp.factory`` builds the server (``lsp.server``) and registers each feature with its state.
"""
