"""Several server processes on one Redis: any process serves any socket.

``server.rooms`` owns tables (the fenced lease, the room actor); this package
is the socket side of the cluster: the ``Bus`` between processes (Redis
pub/sub), the ``Forwarder`` that serves a socket whose table another process
owns, the owner's ``RemoteConnection`` for such a socket, and the ``Node`` that
ties them to this process's room registry.  docs/architecture.md, "Cluster",
explains the design.
"""
