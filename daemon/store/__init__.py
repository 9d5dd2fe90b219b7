"""What the daemon keeps on disk for every user of the workstation: the SQLite result cache and
the feedback log kept beside it."""
