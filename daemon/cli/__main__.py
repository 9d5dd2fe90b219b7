"""``python -m daemon.cli``: the same as the ``assist`` command."""

import sys

from daemon.cli.main import main

sys.exit(main())
