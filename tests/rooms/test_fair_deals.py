"""A room's ``FairDeals`` on its own (an injected clock, no Redis): when a deal request
is held for the players' seeds, what a seed or a wait that runs out releases, and that
the published fairness changes exactly when a seed comes in."""

from __future__ import annotations

from room_helpers import FakeClock, Socket

from server import bots, engine
from server.engine import MatchState, NextDeal
from server.rooms.entropy import ENTROPY_WAIT_SECONDS, EntropyDue, GiveEntropy
from server.rooms.fair_deals import FairDeals, Given
from server.rooms.log import TableMeta, match_seed
from server.rooms.tables import CreateTableRequest, build_table

SEED_A = "a" * 32


def first_deal_over(humans: int) -> tuple[TableMeta, MatchState]:
    """A fixed 5-deal table of ``humans`` humans, its first deal played out."""
    meta, _ = build_table(CreateTableRequest(humans=humans, deals=5, seed=7))
    state = engine.new_match(meta.rules, match_seed(meta.seed, 1, meta.secret), meta.deals)
    while state.deal.result is None:
        view = engine.seat_view(state, state.deal.turn, hints=engine.BOT_HINTS)
        engine.apply(state, bots.fallback_action(view))
    return meta, state


class Table:
    def __init__(self, humans: int) -> None:
        self.meta, self.state = first_deal_over(humans)
        self.clock = FakeClock()
        self.posted: list[EntropyDue] = []
        self.sockets = {s.seat for s in self.meta.seats if s.kind == "human"}
        self.fair = FairDeals(self.clock, self.posted.append, self.sockets.__contains__)

    def commitment(self) -> str:
        upcoming = self.fair.published(self.meta, self.state, 1).upcoming
        assert upcoming is not None
        return upcoming.commitment

    def give(self, seat: int, seed: str = SEED_A) -> Given:
        given = GiveEntropy(self.commitment(), seed)
        return self.fair.give(seat, given, self.meta, self.state, 1)

    def hold(self, listener: Socket) -> bool:
        return self.fair.hold(listener.conn, NextDeal(), self.meta, self.state, 1)


async def test_a_deal_is_not_held_for_a_client_that_never_sent_a_seed() -> None:
    table = Table(humans=2)
    assert not table.hold(Socket(0))
    assert table.clock.pending() == []


async def test_a_deal_is_held_for_a_connected_sender_until_its_seed_comes() -> None:
    table = Table(humans=2)
    table.give(1)  # seat 1's client sends seeds; the deal after next waits for it
    table.fair.dealt()
    table.sockets.discard(0)
    asker = Socket(0)
    assert table.hold(asker)
    assert table.hold(Socket(0))  # a second ask while one is held is the same deal
    given = table.give(1, "b" * 32)
    assert given.deal is not None
    assert given.deal[0] is asker.conn


async def test_a_sender_whose_socket_is_gone_is_not_waited_for() -> None:
    table = Table(humans=2)
    table.give(1)
    table.fair.dealt()
    table.sockets.discard(1)
    assert not table.hold(Socket(0))


async def test_the_wait_runs_out_after_entropy_wait_seconds_and_releases_the_held_request() -> None:
    table = Table(humans=2)
    table.give(1)
    table.fair.dealt()
    asker = Socket(0)
    assert table.hold(asker)
    table.clock.advance(ENTROPY_WAIT_SECONDS - 0.01)
    assert table.posted == []
    table.clock.advance(0.02)
    [due] = table.posted
    held = table.fair.due(due.round)
    assert held is not None
    assert held[0] is asker.conn
    table.fair.dealt()
    assert table.hold(Socket(0))  # the next deal's ask, held in its turn
    assert table.fair.due(due.round) is None  # the old wait is not the new one's


async def test_the_published_fairness_is_kept_until_a_seed_comes_in() -> None:
    table = Table(humans=2)
    before = table.fair.published(table.meta, table.state, 1)
    assert table.fair.published(table.meta, table.state, 1) is before
    table.give(0)
    after = table.fair.published(table.meta, table.state, 1)
    assert after.upcoming is not None
    assert after.upcoming.received == (True, False, False)
