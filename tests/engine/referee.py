"""An independent referee: the flow of a match from RULES.md, to check ``apply`` against.

It follows a match action by action from the dealt hands and keeps its own
turn, trick, bomb and score book, using only the oracle for what a play is and
what may be played.  Tests replay the engine's log through it and compare.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from server.engine import Rules

from . import oracle

__all__ = ["DealBook", "Referee"]


@dataclass
class DealBook:
    hands: list[list[str]]
    turn: int
    first_play_three: bool
    table: list[str] | None = None
    table_reading: oracle.Reading | None = None
    last_player: int = -1
    passes: int = 0
    played: list[bool] = field(default_factory=lambda: [False] * 3)
    bombs: list[int] = field(default_factory=lambda: [0] * 3)
    pending_bomb: int = -1
    winner: int | None = None
    cards_left: list[int] = field(default_factory=list)
    shut_out: list[bool] = field(default_factory=list)
    card_points: list[int] = field(default_factory=list)
    deal_totals: list[int] = field(default_factory=list)


class Referee:
    def __init__(self, rules: Rules, deals: int) -> None:
        self.rules = rules
        self.deals = deals
        self.totals = [0, 0, 0]
        self.deal_no = 0
        self.book: DealBook | None = None
        self.winners: list[int] | None = None

    def start_deal(self, hands: list[list[str]]) -> int:
        """A new deal with these hands; returns who leads (rules B and C)."""
        self.deal_no += 1
        holder = next(s for s in range(3) if "3S" in hands[s])
        if self.deal_no == 1 or self.rules.later_leader == "three_of_spades":
            leader = holder
        else:
            assert self.book is not None
            assert self.book.winner is not None
            leader = self.book.winner
        self.book = DealBook(
            hands=[list(h) for h in hands],
            turn=leader,
            first_play_three=self.deal_no == 1 and self.rules.first_play_three_spades,
        )
        return leader

    def _legal(self, seat: int) -> list[str]:
        book = self.book
        assert book is not None
        return oracle.legal_plays(
            oracle.rank_counts(book.hands[seat]),
            oracle.rank_counts(book.table) if book.table else None,
            next_has_one=len(book.hands[(seat + 1) % 3]) == 1,
            needs_three=book.first_play_three,
            split_bombs=self.rules.split_bombs,
        )

    def _pay_bomb(self, seat: int) -> None:
        assert self.book is not None
        for s in range(3):
            self.book.bombs[s] += 20 if s == seat else -10

    def play(self, seat: int, cards: list[str]) -> None:
        book = self.book
        assert book is not None
        assert book.winner is None
        assert seat == book.turn
        if book.first_play_three:
            assert "3S" in cards
        legal = oracle.legal_readings(
            oracle.rank_counts(cards),
            oracle.rank_counts(book.hands[seat]),
            book.table_reading,
            next_has_one=len(book.hands[(seat + 1) % 3]) == 1,
            needs_three=book.first_play_three,
            split_bombs=self.rules.split_bombs,
        )
        assert legal, (seat, cards)
        # The highest reading that is legal now.
        reading = max(legal, key=lambda r: (r.kind == "bomb", not r.short, r.length, r.top))
        for c in cards:
            book.hands[seat].remove(c)
        book.table, book.table_reading = list(cards), reading
        book.last_player, book.passes = seat, 0
        book.played[seat] = True
        book.first_play_three = False
        if reading.kind == "bomb":
            if self.rules.bomb_payment == "immediate":
                self._pay_bomb(seat)
            else:
                book.pending_bomb = seat
        if not book.hands[seat]:
            if book.pending_bomb == seat:
                self._pay_bomb(seat)
            self._end_deal(seat)
        else:
            book.turn = (seat + 1) % 3

    def pass_(self, seat: int) -> None:
        book = self.book
        assert book is not None
        assert book.winner is None
        assert seat == book.turn
        assert book.table is not None
        assert self._legal(seat) == []
        book.passes += 1
        if book.passes == 2:
            if book.pending_bomb >= 0:
                self._pay_bomb(book.pending_bomb)
                book.pending_bomb = -1
            book.table = book.table_reading = None
            book.passes = 0
            book.turn = book.last_player
        else:
            book.turn = (seat + 1) % 3

    def _end_deal(self, winner: int) -> None:
        book = self.book
        assert book is not None
        book.winner = winner
        book.turn = -1
        book.cards_left = [len(h) for h in book.hands]
        book.shut_out = [s != winner and not book.played[s] for s in range(3)]
        book.card_points = [0, 0, 0]
        for s in range(3):
            if s != winner:
                owed = book.cards_left[s] * (2 if book.shut_out[s] else 1)
                book.card_points[s] -= owed
                book.card_points[winner] += owed
        book.deal_totals = [book.card_points[s] + book.bombs[s] for s in range(3)]
        self.totals = [self.totals[s] + book.deal_totals[s] for s in range(3)]
        if self.deal_no == self.deals:
            best = max(self.totals)
            self.winners = [s for s in range(3) if self.totals[s] == best]
