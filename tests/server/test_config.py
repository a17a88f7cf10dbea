"""Settings: flags beat PAODEKUAI_* variables, which beat defaults; errors name their source."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from server.config import (
    DEFAULT_CLIENT_DIR,
    OPTIONS,
    ConfigError,
    ConfigReason,
    Settings,
    load_settings,
    parse_duration,
)

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def client_dir(tmp_path: Path) -> Path:
    path = tmp_path / "client"
    path.mkdir()
    return path


def test_defaults_apply_when_neither_flag_nor_environment_is_given(
    tmp_path: Path, client_dir: Path
) -> None:
    settings = load_settings(
        {"data_dir": str(tmp_path / "data"), "client_dir": str(client_dir)}, {}
    )
    assert settings.host == "127.0.0.1"
    assert settings.port == 8000
    assert settings.redis_url is None
    assert settings.embedded_redis
    assert settings.table_ttl_seconds == 7 * 24 * 3600
    assert settings.max_frame_bytes == 16 * 1024
    assert settings.outgoing_queue_size == 64
    assert settings.log_level == "info"


def test_default_data_dir_is_data_under_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    settings = load_settings({}, {}, check_paths=False)
    assert settings.data_dir == tmp_path / "data"
    assert settings.client_dir == REPO_ROOT / "client" == DEFAULT_CLIENT_DIR


def test_every_environment_variable_overrides_its_default(tmp_path: Path, client_dir: Path) -> None:
    environ = {
        "PAODEKUAI_HOST": "0.0.0.0",
        "PAODEKUAI_PORT": "9100",
        "PAODEKUAI_REDIS_URL": "redis://redis:6379/2",
        "PAODEKUAI_DATA_DIR": str(tmp_path / "env-data"),
        "PAODEKUAI_TABLE_TTL": "12h",
        "PAODEKUAI_MAX_FRAME_BYTES": "32768",
        "PAODEKUAI_OUTGOING_QUEUE_SIZE": "10",
        "PAODEKUAI_LOG_LEVEL": "DEBUG",
        "PAODEKUAI_CLIENT_DIR": str(client_dir),
    }
    settings = load_settings({}, environ)
    assert settings == Settings(
        host="0.0.0.0",
        port=9100,
        redis_url="redis://redis:6379/2",
        data_dir=tmp_path / "env-data",
        table_ttl_seconds=12 * 3600,
        max_frame_bytes=32768,
        outgoing_queue_size=10,
        log_level="debug",
        client_dir=client_dir,
    )


def test_a_flag_wins_over_its_environment_variable(tmp_path: Path, client_dir: Path) -> None:
    environ = {
        "PAODEKUAI_PORT": "9100",
        "PAODEKUAI_TABLE_TTL": "12h",
        "PAODEKUAI_DATA_DIR": str(tmp_path / "env-data"),
        "PAODEKUAI_CLIENT_DIR": str(client_dir),
    }
    flags = {"port": "9200", "table_ttl_seconds": "30m", "data_dir": str(tmp_path / "flag-data")}
    settings = load_settings(flags, environ)
    assert settings.port == 9200
    assert settings.table_ttl_seconds == 1800
    assert settings.data_dir == tmp_path / "flag-data"
    assert settings.client_dir == client_dir  # no flag: the environment still applies


def test_an_empty_environment_variable_counts_as_unset(client_dir: Path) -> None:
    environ = {"PAODEKUAI_REDIS_URL": "", "PAODEKUAI_PORT": "", "PAODEKUAI_CLIENT_DIR": ""}
    settings = load_settings({"client_dir": str(client_dir)}, environ, check_paths=False)
    assert settings.redis_url is None
    assert settings.port == 8000


@pytest.mark.parametrize(
    ("flags", "environ", "source", "reason"),
    [
        ({"port": "70000"}, {}, "--port", ConfigReason.BAD_PORT),
        ({}, {"PAODEKUAI_PORT": "0"}, "PAODEKUAI_PORT", ConfigReason.BAD_PORT),
        ({}, {"PAODEKUAI_PORT": "eighty"}, "PAODEKUAI_PORT", ConfigReason.BAD_VALUE),
        ({"table_ttl_seconds": "7 days"}, {}, "--table-ttl", ConfigReason.BAD_VALUE),
        ({"table_ttl_seconds": "5s"}, {}, "--table-ttl", ConfigReason.BAD_VALUE),
        (
            {},
            {"PAODEKUAI_MAX_FRAME_BYTES": "10"},
            "PAODEKUAI_MAX_FRAME_BYTES",
            ConfigReason.BAD_VALUE,
        ),
        ({"outgoing_queue_size": "0"}, {}, "--outgoing-queue-size", ConfigReason.BAD_VALUE),
        ({"log_level": "loud"}, {}, "--log-level", ConfigReason.BAD_LOG_LEVEL),
        ({"redis_url": "http://redis:6379"}, {}, "--redis-url", ConfigReason.BAD_REDIS_URL),
        (
            {},
            {"PAODEKUAI_REDIS_URL": "redis://"},
            "PAODEKUAI_REDIS_URL",
            ConfigReason.BAD_REDIS_URL,
        ),
        ({"redis_url": "unix://"}, {}, "--redis-url", ConfigReason.BAD_REDIS_URL),
        ({"host": "  "}, {}, "--host", ConfigReason.BAD_VALUE),
    ],
)
def test_a_bad_value_is_refused_naming_the_flag_or_variable_it_came_from(
    flags: dict[str, str], environ: dict[str, str], source: str, reason: ConfigReason
) -> None:
    with pytest.raises(ConfigError) as refused:
        load_settings(flags, environ, check_paths=False)
    assert refused.value.reason is reason
    assert refused.value.message.startswith(f"{source}: ")


def test_settings_built_directly_are_validated_too() -> None:
    with pytest.raises(ConfigError) as refused:
        Settings(port=65536)
    assert refused.value.reason is ConfigReason.BAD_PORT
    assert refused.value.field == "port"
    with pytest.raises(ConfigError):
        msgspec.structs.replace(Settings(), table_ttl_seconds=0)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("3600", 3600), ("90s", 90), ("30m", 1800), ("12h", 43200), ("7d", 604800), ("2W", 1209600)],
)
def test_durations_take_a_number_of_seconds_or_a_unit(text: str, seconds: int) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "h", "1.5h", "-60", "7 days", "1h30m"])
def test_durations_without_a_whole_amount_and_one_unit_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="is not a duration"):
        parse_duration(text)


def test_a_missing_data_dir_is_created_private(tmp_path: Path, client_dir: Path) -> None:
    data_dir = tmp_path / "new" / "data"
    load_settings({"data_dir": str(data_dir), "client_dir": str(client_dir)}, {})
    assert data_dir.is_dir()
    assert data_dir.stat().st_mode & 0o777 == 0o700
    assert list(data_dir.iterdir()) == []  # the write test leaves nothing behind


def test_a_data_dir_that_is_a_file_is_refused(tmp_path: Path, client_dir: Path) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    with pytest.raises(ConfigError) as refused:
        load_settings({"data_dir": str(not_a_dir), "client_dir": str(client_dir)}, {})
    assert refused.value.reason is ConfigReason.DATA_DIR_UNUSABLE
    assert str(not_a_dir) in refused.value.message


def test_the_data_dir_is_not_touched_when_redis_is_external(
    tmp_path: Path, client_dir: Path
) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    flags = {
        "data_dir": str(not_a_dir / "data"),
        "redis_url": "redis://127.0.0.1:6379/0",
        "client_dir": str(client_dir),
    }
    settings = load_settings(flags, {})
    assert not settings.embedded_redis


def test_a_missing_client_dir_is_refused(tmp_path: Path) -> None:
    flags = {"data_dir": str(tmp_path / "data"), "client_dir": str(tmp_path / "nowhere")}
    with pytest.raises(ConfigError) as refused:
        load_settings(flags, {})
    assert refused.value.reason is ConfigReason.CLIENT_DIR_MISSING
    assert "PAODEKUAI_CLIENT_DIR" in refused.value.message


def test_every_setting_has_exactly_one_flag_and_one_paodekuai_variable() -> None:
    assert [option.field for option in OPTIONS] == list(Settings.__struct_fields__)
    assert len({option.flag for option in OPTIONS}) == len(OPTIONS)
    assert len({option.env for option in OPTIONS}) == len(OPTIONS)
    assert all(option.env.startswith("PAODEKUAI_") for option in OPTIONS)
    assert all(option.flag.startswith("--") for option in OPTIONS)
