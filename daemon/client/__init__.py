"""The client side of the daemon: its HTTP client, the launcher, a large document's window."""
