"""Updates in, frames out: the text frame that tells a socket what its room said."""

from __future__ import annotations

from server.protocol import EmoteReply, HintReply, InviteReply, StateMsg, WatchMsg, encode
from server.rooms.tokens import invite_path
from server.rooms.updates import (
    EmoteShown,
    HintAnswer,
    InviteIssued,
    Refused,
    StateUpdate,
    Update,
    WatchUpdate,
)

from .delta_frames import Feed, frame_for
from .refusals import error_frame
from .table import table_info_of

__all__ = ["frame", "full_frame"]


def frame(update: Update, feed: Feed | None = None) -> str | None:
    """The text frame that tells a socket ``update``; ``feed`` is what that socket
    was last shown (None: a socket that is sent every picture whole).  None when
    there is nothing to tell: the socket takes deltas and its picture is unchanged."""
    if isinstance(update, StateUpdate | WatchUpdate):
        if feed is None or not feed.deltas:
            return full_frame(update)
        return frame_for(update, feed)
    if isinstance(update, EmoteShown):
        return encode(EmoteReply(seat=update.seat, emote=update.emote))
    if isinstance(update, InviteIssued):
        return encode(
            InviteReply(
                kind="watch" if update.seat is None else "seat",
                seat=update.seat,
                token=update.token,
                invite=invite_path(update.table_id, update.seat, update.token),
            )
        )
    if isinstance(update, HintAnswer):
        return encode(
            HintReply(
                version=update.version, cards=update.cards, index=update.index, count=update.count
            )
        )
    assert isinstance(update, Refused)
    return error_frame(update.error, update.version)


def full_frame(update: StateUpdate | WatchUpdate) -> str:
    """The whole ``state`` (or ``watch``) frame of ``update``, made once per update."""
    text: str | None = update.frames.get("full")
    if text is None:
        message: StateMsg | WatchMsg
        if isinstance(update, StateUpdate):
            message = StateMsg(
                version=update.version,
                table=table_info_of(update.table),
                view=update.view,
                events=update.events,
            )
        else:
            message = WatchMsg(
                version=update.version,
                table=table_info_of(update.table),
                view=update.view,
                events=update.events,
            )
        text = update.frames["full"] = encode(message)
    return text
