"""The table a quick-match group sits at: made once, by whichever process gets there.

The process whose script call seated a group makes its table at once; a player's
poll that finds its table missing (that process died in between) makes it from the
group's record.  ``TableStore.create`` never overwrites, so two makers race safely:
one table, and the loser learns it exists.  Each seat's token hash is the one its
player sent when joining the queue, so only that player's browser holds the token.
"""

from __future__ import annotations

import msgspec

from server.ratings import RatingStore
from server.rooms.store import StoreError, TableStore
from server.rooms.tables import CreateTableRequest, build_table

from .codes import Codes
from .queue import Group

__all__ = ["BOT_LEVEL", "make_table"]

# The bots that fill the seats nobody took within the wait.
BOT_LEVEL = "normal"


async def make_table(
    store: TableStore,
    codes: Codes | None,
    group: Group,
    *,
    max_tables: int | None,
    ratings: RatingStore | None = None,
) -> bool:
    """Create ``group``'s table unless it exists; True when this call created it."""
    if await store.load_meta(group.table) is not None:
        return False
    if ratings is not None:
        # Before the table exists, so no match of it can end without its players known.
        for seat, member in enumerate(group.members):
            await ratings.seat_player(group.table, seat, member.player, member.token_hash)
    humans = len(group.members)
    request = CreateTableRequest(
        rules=group.rules,
        deals=group.deals,
        humans=humans,
        bots=[BOT_LEVEL] * (3 - humans),
        name=group.members[0].name,
    )
    meta, _ = build_table(request)
    seats = list(meta.seats)
    for seat, member in enumerate(group.members):
        seats[seat] = msgspec.structs.replace(
            seats[seat], name=member.name, token_hash=member.token_hash
        )
    meta = msgspec.structs.replace(meta, id=group.table, seats=seats)
    try:
        await store.create(meta, max_tables=max_tables)
    except StoreError as exc:
        if await store.load_meta(group.table) is not None:
            return False
        raise exc
    if codes is not None:
        await codes.register(group.table, rules=group.rules, deals=group.deals, bots="", free=[])
    return True
