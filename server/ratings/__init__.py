"""Skill ratings, statistics and leaderboards, updated once per finished match."""

from .hook import install, match_finished
from .record import MatchRecord, SeatLine, record_of
from .store import RatingStore, Track
from .worker import RatingWorker

__all__ = [
    "MatchRecord",
    "RatingStore",
    "RatingWorker",
    "SeatLine",
    "Track",
    "install",
    "match_finished",
    "record_of",
]
