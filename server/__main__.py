"""``python -m server`` is the ``paodekuai`` console script."""

from server.cli import main

# Guarded so that a process that imports this module (a spawned worker) never serves.
if __name__ == "__main__":
    raise SystemExit(main())
