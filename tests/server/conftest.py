"""The live-server fixtures of test_app, shared with the other socket tests here."""

from test_app import client_dir, http, live, sync_redis  # noqa: F401 - fixtures
