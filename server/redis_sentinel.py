"""The ``redis+sentinel://`` URL: a Redis primary found through Redis Sentinel.

``redis+sentinel://[[user]:password@]host[:port][,host[:port]...]/service[/db]``
names the sentinels (port 26379 unless given), the service (the name the
sentinels monitor, ``sentinel monitor <service> ...``) and the database.  The
user and password are the data nodes' (primary and replicas); the sentinels'
own password, if they have one, is the query parameter ``sentinel_password``.
No other query parameter is accepted: a typo must not pass for a setting.

Parsing lives here, below the settings and the cluster layer, so that the
settings refuse a bad URL at start-up with the same reading the client uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qs, unquote, urlsplit

__all__ = [
    "DEFAULT_SENTINEL_PORT",
    "SENTINEL_SCHEMES",
    "SentinelTarget",
    "is_sentinel_url",
    "parse_sentinel_url",
]

SENTINEL_SCHEMES = ("redis+sentinel",)
DEFAULT_SENTINEL_PORT = 26379
_QUERY_OPTIONS = ("sentinel_password",)


@dataclass(frozen=True, slots=True)
class SentinelTarget:
    """What a ``redis+sentinel://`` URL says: whom to ask, for which service, and how
    to log in to the primary it names."""

    sentinels: tuple[tuple[str, int], ...]
    service: str
    db: int = 0
    username: str | None = None
    password: str | None = None
    sentinel_password: str | None = None


def is_sentinel_url(url: str) -> bool:
    """Whether ``url`` asks for a primary through Sentinel."""
    return urlsplit(url).scheme in SENTINEL_SCHEMES


def parse_sentinel_url(url: str) -> SentinelTarget:
    """The ``SentinelTarget`` of ``url``; ``ValueError`` saying what is wrong with it."""
    parts = urlsplit(url)
    if parts.scheme not in SENTINEL_SCHEMES:
        raise ValueError(f"not a redis+sentinel:// URL: {url!r}")
    userinfo, _, hosts = parts.netloc.rpartition("@")
    username: str | None = None
    password: str | None = None
    if userinfo:
        user, colon, secret = userinfo.partition(":")
        username = unquote(user) or None
        password = unquote(secret) if colon else None
    sentinels = tuple(_host_port(item, url) for item in hosts.split(","))
    path = [p for p in parts.path.split("/") if p]
    if not path or len(path) > 2:
        raise ValueError(f"Sentinel URL needs /service or /service/db after the hosts: {url!r}")
    service = unquote(path[0])
    db = 0
    if len(path) == 2:
        if not path[1].isdigit():
            raise ValueError(f"Sentinel URL's database must be a number: {url!r}")
        db = int(path[1])
    query = parse_qs(parts.query, keep_blank_values=True, strict_parsing=False)
    unknown = sorted(set(query) - set(_QUERY_OPTIONS))
    if unknown:
        raise ValueError(
            f"Sentinel URL takes only {', '.join(_QUERY_OPTIONS)} as options, not "
            f"{', '.join(unknown)}"
        )
    sentinel_password = query.get("sentinel_password", [None])[-1] or None
    return SentinelTarget(sentinels, service, db, username, password, sentinel_password)


def _host_port(item: str, url: str) -> tuple[str, int]:
    item = item.strip()
    if item.startswith("["):  # [::1]:26379
        host, _, rest = item[1:].partition("]")
        port_text = rest.removeprefix(":")
    else:
        host, _, port_text = item.partition(":")
    if not host:
        raise ValueError(f"Sentinel URL has an empty host: {url!r}")
    if not port_text:
        return host, DEFAULT_SENTINEL_PORT
    if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise ValueError(f"Sentinel URL has a bad port {port_text!r}: {url!r}")
    return host, int(port_text)
