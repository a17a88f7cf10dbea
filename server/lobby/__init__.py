"""Finding people to play with: room codes, open tables, the lobby, quick match.

``codes`` (every table's short code and the seats it hands out), ``listing`` (the
live list of open tables), ``queue`` (quick-match pairing in Redis), ``matched``
(the table a group sits at), ``routes`` (their HTTP API) and ``mount`` (the
``Lobby`` the app mounts: all of it, with the ratings, put together and started).
"""

from .mount import Lobby, LobbySettings
from .routes import LobbyLimits, LobbyRoutes

__all__ = ["Lobby", "LobbyLimits", "LobbyRoutes", "LobbySettings"]
