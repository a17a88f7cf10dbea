"""The ``table`` part of every frame: who sits where, the fairness published, the clock."""

from __future__ import annotations

from server.protocol import ClockInfo, FairnessInfo, SeatInfo, TableInfo, UpcomingInfo
from server.rooms.clock import remaining_ms
from server.rooms.seating import on_auto
from server.rooms.updates import TableSnapshot

__all__ = ["table_info", "table_info_of"]


def table_info(table: TableSnapshot) -> TableInfo:
    """The ``table`` part of a ``state`` frame (bots always count as connected)."""
    meta = table.meta
    return TableInfo(
        id=meta.id,
        seats=[
            SeatInfo(
                seat=s.seat,
                name=s.name,
                kind=s.kind,
                level=s.level,
                connected=s.kind == "bot" or table.connected[s.seat],
                auto=s.kind == "human" and s.standins > 0,
                on_auto=on_auto(s),
            )
            for s in meta.seats
        ],
        bot_speed_ms=table.bot_speed_ms,
        humans=meta.humans,
        match_no=table.match_no,
        fairness=FairnessInfo(
            commitments=list(table.commitments),
            seed=table.reveal.seed if table.reveal else None,
            salt=table.reveal.salt if table.reveal else None,
            entropy=[list(seeds) for seeds in table.entropy],
            next=None
            if table.upcoming is None
            else UpcomingInfo(
                match_no=table.upcoming.match_no,
                deal_no=table.upcoming.deal_no,
                commitment=table.upcoming.commitment,
                received=list(table.upcoming.received),
            ),
        ),
        turn_seconds=meta.turn_seconds,
        grace_seconds=meta.grace_seconds,
        clock=_clock_info(table),
        spectators=table.spectators,
    )


def _clock_info(table: TableSnapshot) -> ClockInfo | None:
    clock = table.meta.clock
    if clock is None:
        return None
    return ClockInfo(
        seat=clock.seat,
        deadline=round(clock.deadline * 1000),
        remaining_ms=remaining_ms(clock, table.now),
    )


def table_info_of(table: TableSnapshot) -> TableInfo:
    """``table_info`` of ``table``, made once per snapshot for every frame of it."""
    info: TableInfo | None = table.frames.get("table")
    if info is None:
        info = table.frames["table"] = table_info(table)
    return info
