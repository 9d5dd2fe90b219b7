"""The client side of the daemon: the HTTP client that speaks the wire protocol, the launcher
that finds a running daemon or starts one, and the window of a large document that a completion
request sends."""
