"""A throwaway PostgreSQL server for the tests and the benchmarks: a fresh cluster (``initdb``)
in a temporary directory, listening on a Unix socket only (no port to collide with another
run), started with ``pg_ctl`` as the unprivileged ``postgres`` user when we are root (the
server refuses to run as root), stopped and removed at the end.

The Debian ``postgresql`` package provides the binaries (``make system`` installs it).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import urllib.parse
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

__all__ = ["PostgresServer", "bindir", "running"]


def bindir() -> Path | None:
    """The newest installed server's binaries (``/usr/lib/postgresql/N/bin``), or ``None``."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(Path(p).parts[4]))
    return Path(found[-1]).parent if found else None


class PostgresServer:
    def __init__(self, root: Path, bin_dir: Path) -> None:
        self.root = root
        self.bin = bin_dir
        self.data = root / "data"
        self.socket_dir = root

    @property
    def conninfo(self) -> str:
        return f"host={self.socket_dir} port=5432 user=postgres dbname=postgres"

    def url(self, database: str = "postgres", options: str | None = None) -> str:
        """A ``postgresql://`` URL of the server (its Unix socket as the ``host`` parameter)."""
        query = {"host": str(self.socket_dir), "port": "5432"} | ({"options": options} if options else {})
        return f"postgresql://postgres@/{database}?{urllib.parse.urlencode(query, quote_via=urllib.parse.quote)}"

    def schema_url(self, name: str | None = None) -> str:
        """A ``postgresql://`` URL whose tables go to a fresh schema of their own (one per test:
        cheaper than a database). The schema is created here."""
        import psycopg

        name = name or f"t_{uuid.uuid4().hex[:16]}"
        with psycopg.connect(self.conninfo, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {name}")
        return self.url(options=f"-c search_path={name}")

    def _as_owner(self, *args: str) -> subprocess.CompletedProcess[str]:
        cmd = list(args)
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=120)

    def start(self) -> None:
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(self.root, user.pw_uid, user.pw_gid)
        self._as_owner(
            str(self.bin / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"
        )
        options = f"-k {self.socket_dir} -p 5432 -c listen_addresses='' -c fsync=on -c max_connections=200"
        self._as_owner(
            str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", options, "-l", str(self.root / "log"), "-w", "start"
        )

    def stop(self) -> None:
        self._as_owner(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")


@contextmanager
def running() -> Iterator[PostgresServer]:
    """Start a server for the duration of the block (``RuntimeError`` when none is installed)."""
    bin_dir = bindir()
    if bin_dir is None:
        raise RuntimeError("the PostgreSQL server is not installed (Debian package postgresql: make system)")
    root = Path(tempfile.mkdtemp(prefix="msgwire-pg-"))
    os.chmod(root, 0o700)
    server = PostgresServer(root, bin_dir)
    try:
        server.start()
        yield server
    finally:
        with suppress(subprocess.CalledProcessError):
            server.stop()
        shutil.rmtree(root, ignore_errors=True)
