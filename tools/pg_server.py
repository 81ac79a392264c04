"""A throwaway PostgreSQL server for the tests and benchmarks: `initdb` into a temporary
folder, listening on a unix socket in that folder only, stopped and removed at the end.

    with throwaway_server() as server:
        server.conninfo  # "postgresql:///agrun?host=/tmp/agrun-pg-…&user=agrun"

The binaries are the first `initdb` found on PATH or in Debian's /usr/lib/postgresql/<n>/bin
(``./build.sh test`` installs Debian's postgresql when none is found). PostgreSQL refuses to
run as root, so under root the server runs as the ``postgres`` user (or ``nobody``), which
owns the folder. Run it by hand: ``python tools/pg_server.py`` starts one and prints its
conninfo until Ctrl-C.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PgServer", "PgServerError", "find_bin", "throwaway_server"]

DATABASE = "agrun"
SUPERUSER = "agrun"


class PgServerError(RuntimeError):
    """The server could not be found, initialized or started; the message says how to fix it."""


@dataclass(frozen=True)
class PgServer:
    root: Path
    bin_dir: Path

    @property
    def socket_dir(self) -> Path:
        return self.root

    @property
    def conninfo(self) -> str:
        return f"postgresql:///{DATABASE}?host={self.socket_dir}&user={SUPERUSER}"

    @property
    def log(self) -> Path:
        return self.root / "server.log"


def find_bin() -> Path:
    """The folder holding initdb, pg_ctl and postgres, or PgServerError."""
    found = shutil.which("initdb")
    if found:
        return Path(os.path.realpath(found)).parent
    debian = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if debian:
        return Path(debian[-1]).parent
    raise PgServerError(
        "PostgreSQL is not installed (no initdb on PATH or in /usr/lib/postgresql/*/bin): "
        "run ./build.sh test, which installs Debian's postgresql, or "
        "apt-get install postgresql"
    )


def _server_user() -> pwd.struct_passwd | None:
    """Whom the server runs as: None (ourselves) unless we are root, which initdb refuses."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            return pwd.getpwnam(name)
    raise PgServerError("running as root and there is no 'postgres' or 'nobody' user to run as")


def _run(args: list[str], user: pwd.struct_passwd | None, cwd: Path) -> None:
    as_user = {} if user is None else {"user": user.pw_uid, "group": user.pw_gid}
    done = subprocess.run(
        args, cwd=cwd, capture_output=True, text=True, check=False, **as_user, env=_env(user)
    )
    if done.returncode != 0:
        raise PgServerError(
            f"{Path(args[0]).name} failed ({done.returncode}): {done.stderr or done.stdout}"
        )


def _env(user: pwd.struct_passwd | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    if user is not None:
        env.update(HOME=user.pw_dir, USER=user.pw_name, LOGNAME=user.pw_name)
    return env


def start(*, durable: bool = False) -> PgServer:
    """Initialize and start a server in a new temporary folder.

    Args:
        durable: keep fsync on (benchmarks that compare commit latency); the tests turn it
            off, since a crash of the test machine loses nothing they need.
    """
    bin_dir = find_bin()
    user = _server_user()
    root = Path(tempfile.mkdtemp(prefix="agrun-pg-"))
    if user is not None:
        os.chown(root, user.pw_uid, user.pw_gid)
    server = PgServer(root=root, bin_dir=bin_dir)
    data = root / "data"
    sync = [] if durable else ["--no-sync"]
    _run(
        [str(bin_dir / "initdb"), "-D", str(data), "-U", SUPERUSER, "--auth=trust",
         "-E", "UTF8", "--no-locale", *sync],
        user, root,
    )  # fmt: skip
    options = f"-k {root} -c listen_addresses='' -c max_connections=200"
    if not durable:
        options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    _run(
        [str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(server.log), "-o", options,
         "-w", "-t", "60", "start"],
        user, root,
    )  # fmt: skip
    _run([str(bin_dir / "createdb"), "-h", str(root), "-U", SUPERUSER, DATABASE], user, root)
    return server


def stop(server: PgServer) -> None:
    """Stop the server (fast shutdown) and remove its folder."""
    user = _server_user()
    try:
        _run(
            [str(server.bin_dir / "pg_ctl"), "-D", str(server.root / "data"), "-m", "fast",
             "-w", "stop"],
            user, server.root,
        )  # fmt: skip
    finally:
        shutil.rmtree(server.root, ignore_errors=True)


@contextlib.contextmanager
def throwaway_server(*, durable: bool = False) -> Iterator[PgServer]:
    server = start(durable=durable)
    try:
        yield server
    finally:
        stop(server)


if __name__ == "__main__":
    with throwaway_server(durable="--durable" in sys.argv) as running:
        print(running.conninfo, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            input("PostgreSQL is running; press Enter (or Ctrl-C) to stop it\n")
