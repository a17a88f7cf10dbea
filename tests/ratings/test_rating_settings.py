"""The ratings' settings (server.config): the markers that make a match count once
must outlive any table that could be reloaded with that match over."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.config import ConfigError, Settings


def test_a_rating_retention_shorter_than_the_table_ttl_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as refused:
        Settings(client_dir=tmp_path, table_ttl_seconds=10 * 86400, rating_retention_seconds=86400)
    assert refused.value.field == "rating_retention_seconds"
    Settings(client_dir=tmp_path, table_ttl_seconds=86400, rating_retention_seconds=86400)
