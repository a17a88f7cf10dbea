"""What a finished match says about each seat: the facts a rating job needs.

Built by the room actor from the match it just ended (``record_of``) and nothing
else: the seats' kinds and token hashes at the end, every deal's result and the
plays of the match.  A plain value, so that a job can be retried and a new owner
that replays the table's log builds the very same one.
"""

from __future__ import annotations

from dataclasses import dataclass

from server import engine
from server.engine import Play
from server.rooms.log import TableMeta

__all__ = ["MatchRecord", "SeatLine", "bombs_in", "record_of"]


@dataclass(frozen=True, slots=True)
class SeatLine:
    """One seat's match: its kind and token then, and what it did."""

    seat: int
    human: bool
    token_hash: str
    points: int
    deals_won: int
    shut_outs: int
    bombs: int


@dataclass(frozen=True, slots=True)
class MatchRecord:
    """A finished match of ``table`` (its ``match_no``-th), seat by seat."""

    table: str
    match_no: int
    preset: str
    deals: int
    seats: tuple[SeatLine, ...]

    @property
    def human_only(self) -> bool:
        """No bot sat at the table when the match ended (the two rating tracks)."""
        return all(line.human for line in self.seats)


def bombs_in(log: list[engine.Action], seat: int) -> int:
    """Bombs ``seat`` played: four cards of one rank (the deck's only bomb)."""
    return sum(
        1
        for action in log
        if isinstance(action, Play)
        and action.seat == seat
        and len(action.cards) == 4
        and len({code[0] for code in action.cards}) == 1
    )


def record_of(meta: TableMeta, state: engine.MatchState, match_no: int) -> MatchRecord | None:
    """The record of ``state``'s match, or None while it has not ended."""
    if state.winners is None:
        return None
    seats = []
    for seat in meta.seats:
        i = seat.seat
        seats.append(
            SeatLine(
                seat=i,
                # A seat a bot played part of this match counts as the bot's (the match is
                # then rated on the bots track, and the person who took it over is not).
                human=seat.kind == "human" and seat.bot_match != match_no,
                token_hash=seat.token_hash or "",
                points=state.totals[i],
                deals_won=sum(1 for r in state.results if r.winner == i),
                # Deals this seat won while shutting somebody out (nobody else played a card).
                shut_outs=sum(1 for r in state.results if r.winner == i and any(r.shut_out)),
                bombs=bombs_in(state.log, i),
            )
        )
    return MatchRecord(meta.id, match_no, meta.rules.preset, len(state.results), tuple(seats))
