"""What the daemon keeps on disk for every user: the SQLite result cache and the feedback log."""
