"""``python -m server`` is the ``paodekuai`` console script."""

from server.cli import main

raise SystemExit(main())
