"""``python -m server.verify`` checks a seat's whole record: a real server's record passes,
and every way of forging one that a cheating server (or a doctored file) could try fails,
each with its own reason code."""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from records import create_and_play, run_verify

from server.fairness import dealt_hand
from server.verify import ProblemCode
from tests.conftest import SCRIPTED_PACE

if TYPE_CHECKING:
    from conftest import ServerFactory

Record = list[dict[str, Any]]


def _states(record: Record) -> list[dict[str, Any]]:
    return [x for x in record if x["type"] == "state"]


def _reveal(record: Record) -> tuple[int, str]:
    info = _states(record)[-1]["table"]["fairness"]
    return int(info["seed"]), str(info["salt"])


def _entropy(record: Record, deal_no: int) -> list[str]:
    seeds = _states(record)[-1]["table"]["fairness"].get("entropy") or []
    return list(seeds[deal_no - 1]) if len(seeds) >= deal_no else []


def commitments_only_with_the_reveal(record: Record) -> None:
    for frame in _states(record)[:-1]:
        frame["table"]["fairness"]["commitments"] = []
        frame["table"]["fairness"]["next"] = None


def seat_1_plays_a_card_dealt_to_seat_2(record: Record) -> None:
    seed, _ = _reveal(record)
    for frame in _states(record):
        view = frame["view"]
        for index, move in enumerate(view["moves"]):
            if move["seat"] == 1 and move["cards"]:
                deal_no = view["deal_no"]
                theirs = dealt_hand(
                    view["rules"]["removed_ace"], seed, deal_no, 2, _entropy(record, deal_no)
                )
                target = (deal_no, index)
                break
        else:
            continue
        break
    for frame in _states(record):
        view = frame["view"]
        if view["deal_no"] == target[0] and len(view["moves"]) > target[1]:
            move = view["moves"][target[1]]
            move["cards"] = [theirs[0], *move["cards"][1:]]


def revealed_cards_forged(record: Record) -> None:
    last = _states(record)[-1]["view"]
    losers = [cards for cards in last["revealed"] if cards]
    card = losers[0].pop()
    if len(losers) > 1:
        losers[1].append(card)
    else:
        losers[0].append("2S" if card != "2S" else "3S")


def a_commitment_replaced(record: Record) -> None:
    for frame in _states(record):
        commitments = frame["table"]["fairness"]["commitments"]
        if len(commitments) >= 2:
            commitments[1] = "0" * 64
        upcoming = frame["table"]["fairness"].get("next")
        if upcoming and upcoming["deal_no"] == 2:
            upcoming["commitment"] = "0" * 64


def the_seed_changed_after_the_commitments(record: Record) -> None:
    _states(record)[-1]["table"]["fairness"]["seed"] += 1


def own_hand_swapped(record: Record) -> None:
    hand = _states(record)[0]["view"]["hand"]
    hand[0] = next(c for c in ("3S", "3H", "3D", "3C", "4S", "4H", "4D") if c not in hand)


def a_result_forged(record: Record) -> None:
    last = _states(record)[-1]["view"]
    last["result"]["winner"] = (last["result"]["winner"] + 1) % 3


def a_move_dropped(record: Record) -> None:
    last = _states(record)[-1]["view"]
    del last["moves"][0]


def deal_2_ignores_this_seats_seed(record: Record) -> None:
    for frame in _states(record):
        seeds = frame["table"]["fairness"].get("entropy") or []
        if len(seeds) >= 2:
            seeds[1][0] = ""


def deal_1_ignores_the_seed_sent_with_the_join(record: Record) -> None:
    for frame in _states(record):
        seeds = frame["table"]["fairness"].get("entropy") or []
        if seeds:
            seeds[0][0] = ""


def the_first_deal_published_under_another_commitment_than_the_create_answer(
    record: Record,
) -> None:
    # As if the server had changed its seed once it saw the seed sent with the join.
    assert record[0]["type"] == "entropy"
    record[0]["commitment"] = "0" * 64


TAMPERINGS: dict[Callable[[Record], None], ProblemCode] = {
    commitments_only_with_the_reveal: ProblemCode.COMMITMENT_LATE,
    seat_1_plays_a_card_dealt_to_seat_2: ProblemCode.ILLEGAL_MOVE,
    revealed_cards_forged: ProblemCode.REVEALED_MISMATCH,
    a_commitment_replaced: ProblemCode.COMMITMENT_MISMATCH,
    the_seed_changed_after_the_commitments: ProblemCode.COMMITMENT_MISMATCH,
    own_hand_swapped: ProblemCode.HAND_MISMATCH,
    a_result_forged: ProblemCode.RESULT_MISMATCH,
    a_move_dropped: ProblemCode.MOVES_DIVERGE,
    deal_2_ignores_this_seats_seed: ProblemCode.ENTROPY_IGNORED,
    deal_1_ignores_the_seed_sent_with_the_join: ProblemCode.ENTROPY_IGNORED,
    the_first_deal_published_under_another_commitment_than_the_create_answer: (
        ProblemCode.COMMITMENT_CHANGED
    ),
}


def test_a_real_record_passes_and_each_tampered_copy_fails_with_its_reason(
    server_process: ServerFactory, tmp_path: Path
) -> None:
    srv = server_process(args=SCRIPTED_PACE)
    # Its creator's client sends seeds, the first deal's right after its join.
    record = create_and_play(srv.url, srv.port, random.Random(7), deals=5, sends_seeds=True)
    honest = run_verify(tmp_path, record)
    assert honest.returncode == 0, honest.stdout + honest.stderr
    assert honest.stdout.count("moves replayed legally") == 5, honest.stdout
    assert honest.stdout.count("dealt with client seeds") == 5, honest.stdout
    for tamper, code in TAMPERINGS.items():
        forged = copy.deepcopy(record)
        tamper(forged)
        assert forged != record, tamper.__name__
        refused = run_verify(tmp_path, forged)
        assert refused.returncode == 1, (tamper.__name__, refused.stdout, refused.stderr)
        assert f"MISMATCH [{code.value}]" in refused.stdout, (tamper.__name__, refused.stdout)
