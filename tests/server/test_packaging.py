"""The installed package: a wheel carries the browser client, so ``paodekuai serve``
needs no ``--client-dir``, and every module directory under server/ is in it."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import tomllib
import urllib.request
import venv
from pathlib import Path

import pytest

from tests.conftest import free_port

ROOT = Path(__file__).resolve().parent.parent.parent
READY = b"Pao De Kuai is ready"


def test_every_directory_of_python_modules_under_server_is_a_listed_package() -> None:
    with (ROOT / "pyproject.toml").open("rb") as handle:
        listed = set(tomllib.load(handle)["tool"]["setuptools"]["packages"])
    found = {
        ".".join(path.parent.relative_to(ROOT).parts) for path in (ROOT / "server").rglob("*.py")
    }
    assert found - listed == set()
    assert listed - found == {"server.webclient"}


@pytest.mark.slow
def test_an_installed_wheel_serves_its_own_client_without_client_dir(
    tmp_path: Path, redis_url: str
) -> None:
    # Build from a copy, so the checkout gets no build/ or egg-info of it.
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for name in ("server", "client"):
        shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    wheels = tmp_path / "wheels"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "-q",
            "-w",
            str(wheels),
            str(source),
        ],
        cwd=tmp_path,
        check=True,
        timeout=600,
    )
    (wheel,) = wheels.glob("paodekuai-*.whl")
    shutil.rmtree(source)
    # A fresh venv with only the wheel installed; its dependencies come from this
    # interpreter's site-packages, added as a plain path (so no .pth file there runs:
    # not the editable install's finder, which would serve the checkout instead).
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    fresh = env_dir / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(fresh), "install", "--no-deps", "-q",
         str(wheel)],
        cwd=tmp_path,
        check=True,
        timeout=600,
    )  # fmt: skip
    site = subprocess.run(
        [str(fresh), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(site, "dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAODEKUAI_")}
    env.pop("PYTHONPATH", None)
    server = subprocess.Popen(
        [str(env_dir / "bin" / "paodekuai"), "serve", "--port", str(port),
         "--redis-url", redis_url],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        said = b""
        for line in server.stdout:
            said += line
            if READY in line:
                break
        assert READY in said, said.decode(errors="replace")
        url = f"http://127.0.0.1:{port}"
        with urllib.request.urlopen(f"{url}/", timeout=30) as page:
            assert b"<title>" in page.read()
        with urllib.request.urlopen(f"{url}/js/main.js", timeout=30) as script:
            assert script.headers["content-type"].startswith("text/javascript")
            assert b"import" in script.read()
        where = subprocess.run(
            [str(fresh), "-c", "from server.config import DEFAULT_CLIENT_DIR as d; print(d)"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        assert Path(where) == Path(site, "server", "webclient")
    finally:
        server.send_signal(signal.SIGTERM)
        server.communicate(timeout=60)
