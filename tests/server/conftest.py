"""The live-server fixtures of test_app, shared with the other socket tests here
(``client_dir`` and ``http`` are tests/conftest.py's)."""

from test_app import live, sync_redis  # noqa: F401 - fixtures
