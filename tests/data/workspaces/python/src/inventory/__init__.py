"""Stock levels over HTTP."""
