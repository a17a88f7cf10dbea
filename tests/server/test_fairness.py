"""Provably fair shuffles against a real server: commitments while the match is played,
the seed (and the players' client seeds) once it is over, ``python -m server.verify``
confirming a real record; a server that changes its seed after committing, or drops a
player's seed, is caught; and a host who chose the seed cannot know a friend's cards."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import redis
from records import RecordingSeat, create_and_play, run_verify
from wire import RawWebSocket, http_json

from server.fairness import commitment, dealt_hand
from server.rooms.entropy import SERVER_FILLED
from tests.conftest import SCRIPTED_PACE

if TYPE_CHECKING:
    from conftest import ServerFactory, ServerProcess

Frame = dict[str, Any]


def states(record: list[Frame]) -> list[Frame]:
    return [x for x in record if x["type"] == "state"]


def test_each_deal_is_committed_before_play_and_the_seed_revealed_after_the_match(
    server_process: ServerFactory, tmp_path: Path
) -> None:
    srv = server_process(args=SCRIPTED_PACE)
    record = create_and_play(srv.url, srv.port, random.Random(1), deals=5)
    frames = states(record)
    first = frames[0]["table"]["fairness"]
    assert len(first["commitments"]) == 1
    assert first["seed"] is None
    assert first["salt"] is None
    for frame in frames[:-1]:
        fairness = frame["table"]["fairness"]
        assert fairness["seed"] is None, "the seed showed before the match was over"
        assert fairness["entropy"] == [], "client seeds showed before the match was over"
        assert len(fairness["commitments"]) == frame["view"]["deal_no"]
    last = frames[-1]["table"]["fairness"]
    assert len(last["commitments"]) == 5
    for deal_no, published in enumerate(last["commitments"], start=1):
        assert published == commitment(last["seed"], last["salt"], deal_no)
    # Deal 1 was dealt at creation from the server's seed alone; every later deal mixes
    # the seed this seat sent for it.
    sent = [x["seed"] for x in record if x["type"] == "entropy"]
    assert [seeds[0] if seeds else "" for seeds in last["entropy"]] == ["", *sent[:4]]
    removed_ace = frames[0]["view"]["rules"]["removed_ace"]
    hand = sorted(frames[0]["view"]["hand"])
    assert hand == sorted(dealt_hand(removed_ace, last["seed"], 1, 0))
    checked = run_verify(tmp_path, record)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("commitment matches") == 5


CHEATS = Path(__file__).parent / "cheats"


@pytest.mark.parametrize("cheat", ["seed", "ignore"])
def test_a_server_that_deals_otherwise_than_committed_is_caught(
    server_process: ServerFactory, tmp_path: Path, cheat: str
) -> None:
    """``seed``: deals after the first come from another seed than the one committed;
    ``ignore``: the players' seeds are taken and published but not mixed in."""
    srv = server_process(args=SCRIPTED_PACE, env={"PYTHONPATH": str(CHEATS), "PDK_CHEAT": cheat})
    record = create_and_play(srv.url, srv.port, random.Random(2), deals=5)
    assert states(record)[-1]["table"]["fairness"]["entropy"][1][0], "the seed was published"
    refused = run_verify(tmp_path, record)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    # The first frame of deal 2 shows a hand (or a bot's move) the committed deal cannot.
    assert re.search(r"MISMATCH \[(hand_mismatch|illegal_move)\] match 0 deal 2 ", refused.stdout)
    # Deal 1, dealt honestly, still checks out.
    assert "match 0 deal 1: commitment matches" in refused.stdout


def _friend_joins(srv: ServerProcess, seed: int, *, answers: bool) -> tuple[Frame, list[str]]:
    """The host (seat 0) creates a one-human table with ``seed`` and 5 deals, plays deal
    1, opens seat 1 and deals on once the friend has joined; the friend's first frame
    of deal 2, and the host's prediction of the friend's hand from ``seed``."""
    status, table = http_json(
        "POST", f"{srv.url}/api/tables", {"bot_speed_ms": 0, "deals": 5, "seed": seed}
    )
    assert status == 201, table
    tid = table["table"]
    host = RecordingSeat(srv.port, tid, table["seats"][0]["token"], seed_rng=random.Random(4))
    end = host.play(until=lambda f: f["view"]["result"] is not None)
    host.ws.send_json({"type": "open_seat", "version": end["version"], "seat": 1})
    invite = host.ws.recv_json("invite")
    removed_ace = end["view"]["rules"]["removed_ace"]
    prediction = sorted(dealt_hand(removed_ace, seed, 2, 1))
    friend: RecordingSeat | RawWebSocket
    if answers:
        friend = RecordingSeat(srv.port, tid, invite["token"], seed_rng=random.Random(5))
        # The friend's own client deals on, once it has answered the commitment.
        first = friend.play(until=lambda f: f["view"]["deal_no"] == 2)
    else:
        # A client that never sends a seed: the deal waits for it, then goes without.
        friend = RawWebSocket(srv.port)
        friend.send_json({"type": "join", "table": tid, "token": invite["token"]})
        joined = friend.recv_json("state")
        friend.send_json({"type": "next_deal", "version": joined["version"]})
        first = friend.recv_json("state")
        while first["view"]["deal_no"] != 2:
            first = friend.recv_json("state")
    friend.close()
    host.close()
    return first, prediction


def test_a_host_who_chose_the_seed_cannot_predict_a_friends_next_hand(
    server_process: ServerFactory,
) -> None:
    srv = server_process(args=SCRIPTED_PACE)
    for seed, answers in ((31337, True), (4242, False)):
        first, prediction = _friend_joins(srv, seed, answers=answers)
        assert first["view"]["seat"] == 1
        hand = sorted(first["view"]["hand"])
        assert len(hand) == 16
        # Before players' entropy the chosen seed alone dealt it: 16 of 16 cards known.
        assert hand != prediction, (seed, answers)
        assert len(set(hand) & set(prediction)) < 12, (seed, answers)


def test_a_silent_friends_slot_is_filled_with_a_server_secret_on_a_chosen_seed_table(
    server_process: ServerFactory, redis_url: str
) -> None:
    srv = server_process(args=SCRIPTED_PACE)
    first, _ = _friend_joins(srv, 777, answers=False)
    client = redis.Redis.from_url(redis_url)
    entries = [json.loads(x) for x in client.lrange(f"pdk:{{{first['table']['id']}}}:log", 0, -1)]
    client.close()
    (deal,) = [e for e in entries if e["type"] == "next_deal"]
    # Seat 0 answered with its seed, seat 1 gave none and got the server's secret.
    assert len(deal["entropy"][0]) == 32
    assert deal["entropy"][1].startswith(SERVER_FILLED)
    assert deal["entropy"][2] == ""


def test_the_first_deal_mixes_the_seed_its_creator_sends_right_after_joining(
    server_process: ServerFactory, redis_url: str, tmp_path: Path
) -> None:
    srv = server_process(args=SCRIPTED_PACE)
    record = create_and_play(srv.url, srv.port, random.Random(6), deals=5, sends_seeds=True)
    frames = states(record)
    # The seed went out right after the join, answering the create answer's commitment,
    # before any frame came back: the first frame already shows the deal it made.
    first_seed = record[0]
    assert first_seed["type"] == "entropy"
    assert first_seed["commitment"] == frames[0]["table"]["fairness"]["commitments"][0]
    last = frames[-1]["table"]["fairness"]
    assert last["entropy"][0][0] == first_seed["seed"]
    removed_ace = frames[0]["view"]["rules"]["removed_ace"]
    mixed = tuple(last["entropy"][0])
    hand = sorted(frames[0]["view"]["hand"])
    assert hand == sorted(dealt_hand(removed_ace, last["seed"], 1, 0, mixed))
    assert hand != sorted(dealt_hand(removed_ace, last["seed"], 1, 0))
    # The first deal has no log entry: the table's stored meta carries its seeds.
    client = redis.Redis.from_url(redis_url)
    raw = client.get(f"pdk:{{{frames[0]['table']['id']}}}:meta")
    client.close()
    assert isinstance(raw, bytes)
    meta = json.loads(raw)
    assert (meta["first_deal_waits"], meta["first_entropy"][0]) == (False, first_seed["seed"])
    checked = run_verify(tmp_path, record)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "match 0 deal 1: commitment matches, dealt with client seeds" in checked.stdout


def test_a_server_that_ignores_the_creators_first_seed_is_caught(
    server_process: ServerFactory, tmp_path: Path
) -> None:
    srv = server_process(args=SCRIPTED_PACE, env={"PYTHONPATH": str(CHEATS), "PDK_CHEAT": "ignore"})
    record = create_and_play(srv.url, srv.port, random.Random(7), deals=1, sends_seeds=True)
    assert states(record)[-1]["table"]["fairness"]["entropy"][0][0], "the seed was published"
    refused = run_verify(tmp_path, record)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert re.search(r"MISMATCH \[(hand_mismatch|illegal_move)\] match 0 deal 1 ", refused.stdout)


def test_a_script_that_sends_no_seeds_gets_its_first_deal_at_once(
    server_process: ServerFactory,
) -> None:
    # The longest wait there is: a table that waited would outlast the socket's timeout.
    srv = server_process(args=[*SCRIPTED_PACE, "--entropy-wait-seconds", "30"])
    status, table = http_json("POST", f"{srv.url}/api/tables", {"bot_speed_ms": 0})
    assert status == 201, table
    ws = RawWebSocket(srv.port)
    ws.send_json({"type": "join", "table": table["table"], "token": table["seats"][0]["token"]})
    first = ws.recv_json()
    ws.close()
    # Its first frame is the dealt table (the bots, answering at once, may have played).
    assert (first["type"], first["view"]["deal_no"]) == ("state", 1)
    assert first["view"]["hand"]


def test_hostile_first_seeds_are_refused_with_reasons_and_the_deal_still_comes(
    server_process: ServerFactory,
) -> None:
    srv = server_process(args=SCRIPTED_PACE)
    body = {"bot_speed_ms": 0, "sends_seeds": True}
    status, table = http_json("POST", f"{srv.url}/api/tables", body)
    assert status == 201, table
    ws = RawWebSocket(srv.port)
    ws.send_json({"type": "join", "table": table["table"], "token": table["seats"][0]["token"]})
    good = "c" * 32
    for sent, code in (
        ({"commitment": table["commitment"], "seed": "C" * 32}, "invalid_message"),
        ({"commitment": table["commitment"], "seed": good + "0"}, "invalid_message"),
        ({"commitment": "0" * 64, "seed": good}, "entropy_closed"),
    ):
        ws.send_json({"type": "entropy", **sent})
        refused = ws.recv_json()
        assert (refused["type"], refused["code"]) == ("error", code), sent
    ws.send_json({"type": "pass", "version": 0})
    assert ws.recv_json()["code"] == "not_dealt"
    ws.send_json({"type": "entropy", "commitment": table["commitment"], "seed": good})
    first = ws.recv_json()
    ws.close()
    assert first["type"] == "state"
    assert first["table"]["fairness"]["commitments"] == [table["commitment"]]
