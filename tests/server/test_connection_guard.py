"""Whom the guard closes when every connection slot is taken (server.connection_guard).

The guard is plain bookkeeping: these tests drive it with stand-in connections
and an injected clock; tests/server/test_eviction.py attacks a real server.
"""

from __future__ import annotations

import pytest

from server.connection_guard import ConnectionGuard, address_key


class Conn:
    """A connection as the guard sees it: idle or mid-request, and whether it was closed."""

    def __init__(self, name: str, *, waiting: bool = True) -> None:
        self.name = name
        self.waiting = waiting
        self.evicted = False

    def waiting_for_request(self) -> bool:
        return self.waiting

    def evict(self) -> None:
        self.evicted = True

    def __repr__(self) -> str:
        return self.name


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def make_guard(
    cap: int = 4, per_client: int = 4, proxies: tuple[str, ...] = ()
) -> tuple[ConnectionGuard, Clock]:
    clock = Clock()
    return ConnectionGuard(cap, per_client, lambda host: host in proxies, clock), clock


def open_conn(
    guard: ConnectionGuard, name: str, host: str, *, waiting: bool = True
) -> tuple[Conn, bool]:
    conn = Conn(name, waiting=waiting)
    return conn, guard.admit(conn, conn, host)


def websocket(guard: ConnectionGuard, name: str, host: str, table: str | None = None) -> Conn:
    """An admitted game socket: upgraded (same transport, new owner), seated if ``table``."""
    conn, admitted = open_conn(guard, name, host, waiting=False)
    assert admitted
    guard.admit(conn, conn, host)
    if table is not None:
        guard.seated(conn, table)
    return conn


def evicted(conns: list[Conn]) -> list[str]:
    return [c.name for c in conns if c.evicted]


def test_a_full_guard_closes_the_oldest_unjoined_socket_for_a_newcomer() -> None:
    guard, clock = make_guard(cap=4)
    held = []
    for i in range(4):
        clock.now = i
        held.append(websocket(guard, f"u{i}", "10.0.0.2"))
    _, admitted = open_conn(guard, "new", "10.0.0.1")
    assert admitted
    assert evicted(held) == ["u0"]
    assert len(guard) == 4


def test_unjoined_sockets_go_before_idle_http_and_idle_http_before_seated_ones() -> None:
    guard, _ = make_guard(cap=4)
    seated = [websocket(guard, f"seated{i}", "10.0.0.2", table="T") for i in range(2)]
    idle, _ = open_conn(guard, "idle-http", "10.0.0.2")
    unjoined = websocket(guard, "unjoined", "10.0.0.2")
    conns = [*seated, idle, unjoined]
    # Newcomers in the middle of a request: never candidates themselves.
    open_conn(guard, "a", "10.0.0.1", waiting=False)
    assert evicted(conns) == ["unjoined"]
    open_conn(guard, "b", "10.0.0.3", waiting=False)
    assert evicted(conns) == ["idle-http", "unjoined"]
    open_conn(guard, "c", "10.0.0.4", waiting=False)
    assert evicted(conns) == ["seated0", "idle-http", "unjoined"]


def test_an_http_request_in_progress_is_never_closed() -> None:
    guard, _ = make_guard(cap=2)
    busy = [open_conn(guard, f"busy{i}", "10.0.0.2", waiting=False)[0] for i in range(2)]
    _, admitted = open_conn(guard, "new", "10.0.0.1")
    assert not admitted
    assert evicted(busy) == []


def test_nobody_loses_a_connection_to_an_address_that_holds_one_fewer() -> None:
    guard, _ = make_guard(cap=5)
    conns = [websocket(guard, f"a{i}", "10.0.0.2") for i in range(3)]
    conns += [websocket(guard, f"b{i}", "10.0.0.3") for i in range(2)]
    # 10.0.0.3 holds 2: taking one of the 3 of 10.0.0.2 would only swap who holds
    # more (attackers churning each other's sockets), so it is refused.
    _, admitted = open_conn(guard, "b2", "10.0.0.3")
    assert not admitted
    assert evicted(conns) == []
    # A newcomer holding two connections fewer than them may take one.
    open_conn(guard, "c0", "10.0.0.4")
    assert evicted(conns) == ["a0"]


def test_a_seated_socket_is_closed_only_for_an_address_holding_two_fewer() -> None:
    guard, _ = make_guard(cap=3)
    honest = websocket(guard, "honest", "10.0.0.1", table="mine")
    attacker = [websocket(guard, f"x{i}", "10.0.0.2", table="theirs") for i in range(2)]
    # The honest address (1) may take one from the attacker (2): 2 >= 1 + 2 fails...
    _, admitted = open_conn(guard, "honest-2", "10.0.0.1")
    assert not admitted
    # ...but a new address (0) may: then both hold one.
    _, admitted = open_conn(guard, "new", "10.0.0.3")
    assert admitted
    assert evicted([honest, *attacker]) == ["x0"]


def test_an_address_at_its_fair_share_is_never_the_victim_of_a_flood() -> None:
    guard, _ = make_guard(cap=10, per_client=10)
    honest = [websocket(guard, f"h{i}", f"10.0.1.{i}", table=f"t{i}") for i in range(3)]
    flood = [websocket(guard, f"x{i}", "10.0.0.2", table="x") for i in range(7)]
    # Seven more attacker addresses, then the first ones again, many times over.
    for round_ in range(5):
        for n in range(3, 10):
            conn, admitted = open_conn(guard, f"y{round_}-{n}", f"10.0.0.{n}")
            if admitted:
                guard.admit(conn, conn, f"10.0.0.{n}")
                guard.seated(conn, "x")
                flood.append(conn)
    assert evicted(honest) == []
    assert len(guard) == 10


def test_among_seated_sockets_the_fullest_table_then_the_longest_idle_goes() -> None:
    guard, clock = make_guard(cap=5, per_client=5)
    small = websocket(guard, "small", "10.0.0.2", table="small")
    clock.now = 1
    big = [websocket(guard, f"big{i}", "10.0.0.2", table="big") for i in range(4)]
    clock.now = 2
    guard.active(big[0])  # sent a frame: no longer the longest idle
    open_conn(guard, "new", "10.0.0.1")
    assert evicted([small, *big]) == ["big1"]


def test_the_oldest_seated_socket_of_the_address_holding_the_most_goes() -> None:
    guard, clock = make_guard(cap=5, per_client=5)
    few = [websocket(guard, f"few{i}", "10.0.0.2", table=f"f{i}") for i in range(2)]
    clock.now = 1
    many = [websocket(guard, f"many{i}", "10.0.0.3", table=f"m{i}") for i in range(3)]
    open_conn(guard, "new", "10.0.0.1")
    assert evicted([*few, *many]) == ["many0"]


def test_the_per_client_cap_refuses_without_evicting_and_spares_trusted_proxies() -> None:
    guard, _ = make_guard(cap=10, per_client=2, proxies=("10.0.0.9",))
    mine = [open_conn(guard, f"m{i}", "10.0.0.2")[0] for i in range(2)]
    _, admitted = open_conn(guard, "m2", "10.0.0.2")
    assert not admitted
    assert evicted(mine) == []
    assert all(open_conn(guard, f"p{i}", "10.0.0.9")[1] for i in range(5))


def test_a_proxied_socket_counts_for_the_client_its_proxy_names() -> None:
    guard, _ = make_guard(cap=10, per_client=2, proxies=("10.0.0.9",))
    first = websocket(guard, "first", "10.0.0.9")
    assert guard.rekey(first, "203.0.113.5")
    assert guard.held("203.0.113.5") == 1
    assert guard.held("10.0.0.9") == 0
    second = websocket(guard, "second", "10.0.0.9")
    assert guard.rekey(second, "203.0.113.5")
    third = websocket(guard, "third", "10.0.0.9")
    assert not guard.rekey(third, "203.0.113.5")
    guard.release(first)
    assert guard.held("203.0.113.5") == 1


def test_releasing_every_connection_leaves_no_count_behind() -> None:
    guard, _ = make_guard(cap=4)
    conns = [websocket(guard, f"s{i}", "10.0.0.2", table="T") for i in range(3)]
    conns.append(open_conn(guard, "h", "2001:db8::1")[0])
    for conn in conns:
        guard.release(conn)
        guard.release(conn)  # twice is harmless
    assert len(guard) == 0
    assert guard.held("10.0.0.2") == 0
    assert guard.held("2001:db8::1") == 0


@pytest.mark.parametrize(
    ("host", "key"),
    [
        ("10.1.2.3", "10.1.2.3"),
        ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:bbbb::7", "2001:db8:1:2::/64"),
        ("::ffff:10.1.2.3", "10.1.2.3"),
        (None, "unknown"),
    ],
)
def test_an_ipv6_address_counts_with_its_slash_64(host: str | None, key: str) -> None:
    assert address_key(host) == key
