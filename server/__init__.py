"""Pao De Kuai (跑得快) game server.

Kept import-free on purpose: ``python -m server`` and ``from server import engine``
must not drag in the web stack or Redis just to reach one subpackage.
"""

__all__: list[str] = []
