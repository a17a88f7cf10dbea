"""Finding people to play with: room codes, open tables, the lobby, quick match.

``codes`` (every table's short code and the seats it hands out), ``listing`` (the
live list of open tables), ``queue`` (quick-match pairing in Redis), ``matched``
(the table a group sits at) and ``routes`` (their HTTP API).
"""

from .routes import LobbyLimits, LobbyRoutes

__all__ = ["LobbyLimits", "LobbyRoutes"]
