"""Host controls, invites and stand-in bookkeeping on the table meta (pure, no Redis)."""

from __future__ import annotations

import msgspec
import pytest

from server.rooms.clock import AUTO_AFTER
from server.rooms.log import TableMeta
from server.rooms.seating import (
    SeatError,
    SeatReason,
    after_standin,
    claim_open_seat,
    expire_open_invites,
    hand_back,
    make_bot,
    mark_joined,
    on_auto,
    open_seat,
    reissue_invite,
    retired_reason,
    set_watch_link,
)
from server.rooms.tables import CreateTableRequest, build_table
from server.rooms.tokens import hash_token, seat_for_token


def table(humans: int = 2) -> TableMeta:
    meta, _ = build_table(CreateTableRequest(humans=humans, bots=["easy"] * (3 - humans), seed=1))
    return meta


def refused(code: SeatReason, call: object, *args: object, **kwargs: object) -> None:
    assert callable(call)
    with pytest.raises(SeatError) as err:
        call(*args, **kwargs)
    assert err.value.reason is code
    assert err.value.message


def test_a_reissued_invite_opens_the_seat_and_the_old_one_is_revoked() -> None:
    meta = table()
    old = meta.seats[1].token_hash
    assert old is not None
    new = reissue_invite(meta, 0, 1, hash_token("fresh"))
    assert seat_for_token("fresh", [s.token_hash for s in new.seats]) == 1
    assert old not in [s.token_hash for s in new.seats]
    assert retired_reason(new, old) is SeatReason.INVITE_REVOKED
    assert retired_reason(new, hash_token("never")) is None


def test_host_controls_from_another_seat_are_refused_and_change_nothing() -> None:
    meta = table(3)
    before = msgspec.json.encode(meta)
    refused(SeatReason.NOT_HOST, reissue_invite, meta, 1, 2, "h")
    refused(SeatReason.NOT_HOST, make_bot, meta, 2, 1, present=False)
    refused(SeatReason.NOT_HOST, open_seat, meta, 1, 2, "h", between_deals=True)
    refused(SeatReason.NOT_HOST, set_watch_link, meta, 2, "h")
    assert msgspec.json.encode(meta) == before


def test_the_host_seat_and_missing_seats_cannot_be_changed() -> None:
    meta = table()
    refused(SeatReason.HOST_SEAT, reissue_invite, meta, 0, 0, "h")
    refused(SeatReason.HOST_SEAT, make_bot, meta, 0, 0, present=False)
    refused(SeatReason.NO_SUCH_SEAT, make_bot, meta, 0, 3, present=False)
    refused(SeatReason.NO_SUCH_SEAT, reissue_invite, meta, 0, -1, "h")


def test_a_left_human_seat_becomes_a_bot_whose_old_token_is_revoked() -> None:
    meta = table()
    old = meta.seats[1].token_hash
    assert old is not None
    refused(SeatReason.SEAT_PRESENT, make_bot, meta, 0, 1, present=True)
    bot = make_bot(meta, 0, 1, present=False)
    assert (bot.seats[1].kind, bot.seats[1].name, bot.seats[1].level) == ("bot", "Anna", "normal")
    assert bot.seats[1].token_hash is None
    assert retired_reason(bot, old) is SeatReason.INVITE_REVOKED
    refused(SeatReason.SEAT_NOT_HUMAN, make_bot, bot, 0, 1, present=False)
    refused(SeatReason.SEAT_NOT_HUMAN, reissue_invite, bot, 0, 1, "h")


def test_a_bot_seat_opens_between_deals_only_and_the_first_join_makes_it_human() -> None:
    meta = table()
    refused(SeatReason.NOT_BETWEEN_DEALS, open_seat, meta, 0, 2, "h", between_deals=False)
    refused(SeatReason.SEAT_NOT_BOT, open_seat, meta, 0, 1, "h", between_deals=True)
    opened = open_seat(meta, 0, 2, hash_token("seat2"), between_deals=True)
    assert opened.seats[2].kind == "bot"
    assert seat_for_token("seat2", [s.token_hash for s in opened.seats]) == 2
    claimed = claim_open_seat(opened, 2)
    assert claimed.seats[2].kind == "human"
    assert claimed.seats[2].name == "Player 3"
    assert claimed.seats[2].joined
    assert claimed.humans == 3


def test_an_open_invite_nobody_took_expires_when_the_next_deal_starts() -> None:
    opened = open_seat(table(), 0, 2, hash_token("late"), between_deals=True)
    expired = expire_open_invites(opened)
    assert expired.seats[2].token_hash is None
    assert retired_reason(expired, hash_token("late")) is SeatReason.INVITE_EXPIRED
    untouched = table()
    assert expire_open_invites(untouched) is untouched
    assert expire_open_invites(expired).retired == expired.retired


def test_three_stand_in_turns_in_a_row_put_a_seat_on_auto_until_hand_back() -> None:
    meta = table()
    for _ in range(AUTO_AFTER - 1):
        meta = after_standin(meta, 1)
        assert not on_auto(meta.seats[1])
    meta = after_standin(meta, 1)
    assert on_auto(meta.seats[1])
    meta = hand_back(meta, 1)
    assert not on_auto(meta.seats[1])
    assert meta.seats[1].standins == 0


def test_an_own_move_between_stand_in_turns_resets_the_count() -> None:
    meta = after_standin(after_standin(table(), 1), 1)
    meta = hand_back(meta, 1)
    meta = after_standin(meta, 1)
    assert meta.seats[1].standins == 1
    assert not on_auto(meta.seats[1])


def test_a_new_watch_link_revokes_the_previous_one() -> None:
    meta = set_watch_link(table(), 0, hash_token("w1"))
    meta = set_watch_link(meta, 0, hash_token("w2"))
    assert meta.watch_hash == hash_token("w2")
    assert retired_reason(meta, hash_token("w1")) is SeatReason.INVITE_REVOKED


def test_joined_is_recorded_once() -> None:
    meta = mark_joined(table(), 1)
    assert meta.seats[1].joined
    assert mark_joined(meta, 1) is meta


def test_retired_tokens_are_bounded() -> None:
    meta = table()
    for i in range(100):
        meta = reissue_invite(meta, 0, 1, hash_token(f"t{i}"))
    assert len(meta.retired) <= 16
