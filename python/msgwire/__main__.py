"""``python -m msgwire``: the command line (see ``cli.py``)."""

from .cli import main

raise SystemExit(main())
