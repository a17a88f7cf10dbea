"""The package's layers: every import of ``server`` runs downwards (docs/architecture.md,
"Layers").  Imports are read with ``ast``, function-level and type-only ones included,
so a new wrong-way import, or a module no layer names, fails here."""

from __future__ import annotations

import ast
from pathlib import Path

SERVER = Path(__file__).resolve().parent.parent / "server"

# Lowest first.  A module may import modules of a lower rank, and modules of its own
# group; two groups of one rank know nothing of each other (the rooms and the wire).
LAYERS: list[dict[str, tuple[str, ...]]] = [
    {"errors": ("server.errors",)},
    {"engine": ("server.engine",)},
    {"bots": ("server.bots",)},
    {
        "process services": (
            "server.metrics",
            "server.usage",
            "server.logs",
            "server.fairness",
            "server.inbox",
            "server.ratelimit",
            "server.origins",
            "server.redis_embedded",
            "server.redis_sentinel",
            "server.proxies",
            "server.operator_access",
            "server.log_redaction",
            "server.deltas",
            "server.client_shell",
        )
    },
    {"rooms": ("server.rooms", "server.ratings"), "wire": ("server.protocol",)},
    {"shared budgets": ("server.budgets", "server.seat_limits")},
    {"players and lobby": ("server.players", "server.lobby")},
    # Its parts: PRESENTER_PARTS below.
    {"presenter": ("server.presenter",)},
    {"settings": ("server.config",)},
    {
        "sockets": (
            "server.connection",
            "server.transport",
            "server.connection_guard",
            "server.connection_limits",
            "server.fast_paths",
            "server.websocket_protocol",
        )
    },
    {"cluster": ("server.cluster",)},
    {"session": ("server.game_socket_session",)},
    # Its parts: APP_PARTS below.
    {
        "app": (
            "server.app",
            "server.http_answers",
            "server.app_services",
            "server.table_routes",
            "server.operator_routes",
            "server.game_front",
        )
    },
    {"commands": ("server.cli", "server.verify", "server.__main__", "server")},
]

# The presenter's parts, lowest first: each imports only parts before it, and the
# package (``__init__``, the names callers use) gathers them all.
PRESENTER_PARTS = [
    "server.presenter.refusals",
    "server.presenter.table",
    "server.presenter.inbound",
    "server.presenter.delta_frames",
    "server.presenter.outbound",
    "server.presenter",
]
# The app's parts, lowest first, in the same way: ``server.app`` assembles them.
APP_PARTS = [
    "server.http_answers",
    "server.app_services",
    "server.table_routes",
    "server.operator_routes",
    "server.game_front",
    "server.app",
]


def place(module: str) -> tuple[int, str]:
    """(rank, group) of a ``server`` module: the longest prefix any layer names."""
    best: tuple[int, int, str] | None = None
    for rank, groups in enumerate(LAYERS):
        for group, prefixes in groups.items():
            for prefix in prefixes:
                # The package itself is named exactly: a new top-level module is in no
                # layer until one names it.
                inside = module == prefix or (
                    prefix != "server" and module.startswith(prefix + ".")
                )
                if inside and (best is None or len(prefix) > best[0]):
                    best = (len(prefix), rank, group)
    if best is None:
        raise LookupError(f"{module} is in no layer: add it to LAYERS and the docs")
    return best[1], best[2]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SERVER.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path, module: str) -> list[str]:
    """Every ``server`` module that ``path`` (module ``module``) imports."""
    is_package = path.name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # ``from server import bots`` imports the module server.bots.
            for alias in node.names:
                sub = SERVER.parent / Path(*f"{target}.{alias.name}".split("."))
                if sub.is_dir() or sub.with_suffix(".py").exists():
                    found.append(f"{target}.{alias.name}")
                else:
                    found.append(target)
    return sorted({name for name in found if name == "server" or name.startswith("server.")})


def wrong_way(path: Path) -> list[str]:
    module = module_name(path)
    rank, group = place(module)
    out = []
    for target in imports(path, module):
        if target == module:
            continue
        their_rank, their_group = place(target)
        if their_group != group and their_rank >= rank:
            out.append(f"{module} ({group}) imports {target} ({their_group})")
    return out


def test_every_import_of_the_package_runs_down_its_layers() -> None:
    offenders = [line for path in sorted(SERVER.rglob("*.py")) for line in wrong_way(path)]
    assert offenders == []


def test_every_module_is_in_a_layer() -> None:
    for path in SERVER.rglob("*.py"):
        place(module_name(path))


def test_the_protocol_knows_nothing_of_rooms_nor_of_the_settings() -> None:
    path = SERVER / "protocol.py"
    assert [
        m
        for m in imports(path, "server.protocol")
        if m.startswith(("server.rooms", "server.config"))
    ] == []


def test_the_check_sees_each_kind_of_wrong_way_import(tmp_path: Path) -> None:
    fake = tmp_path / "server"
    (fake / "rooms").mkdir(parents=True)
    (fake / "bots").mkdir()
    (fake / "bots" / "__init__.py").write_text("from .. import metrics\n")
    (fake / "rooms" / "names.py").write_text("def f():\n    from server.protocol import encode\n")
    (fake / "engine.py").write_text("from server.rooms import names\n")
    for name in ("metrics.py", "protocol.py"):
        (fake / name).write_text("")
    global SERVER
    real, SERVER = SERVER, fake
    try:
        assert wrong_way(fake / "bots" / "__init__.py") == [
            "server.bots (bots) imports server.metrics (process services)"
        ]
        assert wrong_way(fake / "rooms" / "names.py") == [
            "server.rooms.names (rooms) imports server.protocol (wire)"
        ]
        assert wrong_way(fake / "engine.py") == [
            "server.engine (engine) imports server.rooms.names (rooms)"
        ]
    finally:
        SERVER = real


def test_the_app_sets_up_the_lobby_through_its_one_lobby_object() -> None:
    # The lobby's stores, feed, matchmaker and rating worker are built in server.lobby
    # (``mount.Lobby``); the app composes, it does not reach into the lobby's parts.
    reached = [
        m
        for part in APP_PARTS
        for m in imports(SERVER / f"{part.removeprefix('server.')}.py", part)
        if m.startswith(("server.lobby.", "server.ratings", "server.players"))
        or m == "server.rooms.seat_takeover"
    ]
    assert reached == []


def test_no_helper_of_the_room_knows_the_room() -> None:
    # The actor drives its helpers (held_table, timers, telling, seat_changes, ...);
    # a helper importing the actor back would make them one module again.
    rooms = SERVER / "rooms"
    knowing = [
        path.name
        for path in sorted(rooms.glob("*.py"))
        if "server.rooms.room" in imports(path, module_name(path))
    ]
    assert knowing == ["registry.py"]


def upward(parts: list[str], paths: list[Path]) -> list[str]:
    """Each import among ``parts`` (lowest first) of a part no lower than the importer."""
    return [
        f"{module_name(path)} imports {target}"
        for path in paths
        for target in imports(path, module_name(path))
        if target in parts and parts.index(target) >= parts.index(module_name(path))
    ]


def test_each_part_of_the_presenter_imports_only_the_parts_below_it() -> None:
    # Reading frames, the table part, delta frames, whole frames and refusals are one
    # idea each; a part reaching up would knot them into one module again.
    paths = sorted((SERVER / "presenter").glob("*.py"))
    assert sorted(module_name(path) for path in paths) == sorted(PRESENTER_PARTS)
    assert upward(PRESENTER_PARTS, paths) == []


def test_each_part_of_the_app_imports_only_the_parts_below_it() -> None:
    # HTTP answers, services, the tables' and the operator's routes and the front are
    # one idea each, and server.app only assembles them.
    app_group = next(groups["app"] for groups in LAYERS if "app" in groups)
    assert sorted(app_group) == sorted(APP_PARTS)
    paths = [SERVER / f"{part.removeprefix('server.')}.py" for part in APP_PARTS]
    assert upward(APP_PARTS, paths) == []
