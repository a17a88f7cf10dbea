"""``redis+sentinel://`` URLs, read the same by the settings and the client."""

from __future__ import annotations

import pytest

from server.config import ConfigError, ConfigReason, Settings, load_settings
from server.redis_sentinel import SentinelTarget, is_sentinel_url, parse_sentinel_url


def test_a_sentinel_url_names_its_sentinels_service_database_and_passwords() -> None:
    url = "redis+sentinel://app:s%40cret@10.0.0.1:26380,sentinel-b,[::1]:26381/games/3?sentinel_password=pw"
    assert parse_sentinel_url(url) == SentinelTarget(
        sentinels=(("10.0.0.1", 26380), ("sentinel-b", 26379), ("::1", 26381)),
        service="games",
        db=3,
        username="app",
        password="s@cret",
        sentinel_password="pw",
    )
    assert parse_sentinel_url("redis+sentinel://:pw@h/svc").password == "pw"
    assert parse_sentinel_url("redis+sentinel://:pw@h/svc").username is None
    assert parse_sentinel_url("redis+sentinel://h/svc").db == 0
    assert is_sentinel_url(url)
    assert not is_sentinel_url("redis://h:6379/0")


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("redis+sentinel://h1,h2", "/service"),
        ("redis+sentinel://h1/svc/0/extra", "/service"),
        ("redis+sentinel://h1/svc/zero", "must be a number"),
        ("redis+sentinel://h1:port/svc", "bad port"),
        ("redis+sentinel://h1:70000/svc", "bad port"),
        ("redis+sentinel://h1,,h2/svc", "empty host"),
        ("redis+sentinel://h1/svc?sentinel_pasword=x", "sentinel_pasword"),
    ],
)
def test_a_bad_sentinel_url_is_refused_at_start_up_saying_why(url: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        parse_sentinel_url(url)
    with pytest.raises(ConfigError) as refused:
        Settings(redis_url=url)
    assert refused.value.reason is ConfigReason.BAD_REDIS_URL
    assert why in refused.value.message


def test_replica_acknowledgements_are_off_by_default_and_bounded() -> None:
    settings = load_settings({}, {}, check_paths=False)
    assert settings.redis_replica_acks == 0
    assert settings.redis_replica_ack_timeout_seconds == 1.0
    environ = {
        "PAODEKUAI_REDIS_URL": "redis+sentinel://h1,h2,h3/pdk/0",
        "PAODEKUAI_REDIS_REPLICA_ACKS": "1",
        "PAODEKUAI_REDIS_REPLICA_ACK_TIMEOUT": "250ms",
    }
    settings = load_settings({}, environ, check_paths=False)
    assert (settings.redis_replica_acks, settings.redis_replica_ack_timeout_seconds) == (1, 0.25)
    with pytest.raises(ConfigError, match=r"redis_replica_acks must be 0\.\.16"):
        Settings(redis_url="redis://h/0", redis_replica_acks=17)
    with pytest.raises(ConfigError, match="redis_replica_ack_timeout_seconds must be"):
        Settings(redis_url="redis://h/0", redis_replica_acks=1, redis_replica_ack_timeout_seconds=0)


def test_the_embedded_redis_has_no_replicas_to_wait_for() -> None:
    with pytest.raises(ConfigError, match="embedded Redis has no replicas") as refused:
        Settings(redis_replica_acks=1)
    assert refused.value.field == "redis_replica_acks"
