"""``python -m msgwire``: the command line (see ``cli/``)."""

from .cli import main

raise SystemExit(main())
