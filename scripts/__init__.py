"""Scripts that maintain the repository (not part of the installed package)."""
