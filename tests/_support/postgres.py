"""A throwaway PostgreSQL server for the tests and the benchmarks: a fresh cluster (``initdb``)
in a temporary directory, listening on a Unix socket only (no port to collide with another
run), started with ``pg_ctl`` as the unprivileged ``postgres`` user when we are root (the
server refuses to run as root), stopped and removed at the end.

Every role logs in without a password (``trust``) except ``PASSWORD_ROLE``, which needs
``PASSWORD`` (``scram-sha-256``): ``url(user=PASSWORD_ROLE, password=...)`` tries it. The fault
tests ``stop()``, ``start()``, ``restart()`` and ``crash()`` a server of their own.

The Debian ``postgresql`` package provides the binaries (``make system`` installs it).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.parse
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

__all__ = ["PASSWORD", "PASSWORD_ROLE", "PostgresServer", "bindir", "running"]

PASSWORD_ROLE = "msgwire_pw"
PASSWORD = "s3cret-pw"


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

    def url(
        self, database: str = "postgres", options: str | None = None, *, user: str = "postgres", password: str = ""
    ) -> str:
        """A ``postgresql://`` URL of the server (its Unix socket as the ``host`` parameter)."""
        query = {"host": str(self.socket_dir), "port": "5432"} | ({"options": options} if options else {})
        login = urllib.parse.quote(user) + (":" + urllib.parse.quote(password, safe="") if password else "")
        return f"postgresql://{login}@/{database}?{urllib.parse.urlencode(query, quote_via=urllib.parse.quote)}"

    def schema_url(self, name: str | None = None) -> str:
        """A ``postgresql://`` URL whose tables go to a fresh schema of their own (one per test:
        cheaper than a database). The schema is created here."""
        import psycopg

        name = name or f"t_{uuid.uuid4().hex[:16]}"
        with psycopg.connect(self.conninfo, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {name}")
        return self.url(options=f"-c search_path={name}")

    def role_url(self, role: str | None = None) -> tuple[str, str]:
        """A login role of its own (trusted, as every role but ``PASSWORD_ROLE``), made here
        with a schema it owns; its URL (tables to that schema) and its name. ``locked_out``
        then keeps its connections out while other roles get in."""
        import psycopg

        role = role or f"r_{uuid.uuid4().hex[:16]}"
        with psycopg.connect(self.conninfo, autocommit=True) as conn:
            conn.execute(f"CREATE ROLE {role} LOGIN")
            conn.execute(f"CREATE SCHEMA {role} AUTHORIZATION {role}")
        return self.url(user=role, options=f"-c search_path={role}"), role

    @contextmanager
    def locked_out(self, role: str) -> Iterator[None]:
        """``role`` cannot log in during the block (what is connected stays connected)."""
        self._admin(f"ALTER ROLE {role} NOLOGIN")
        try:
            yield
        finally:
            self._admin(f"ALTER ROLE {role} LOGIN")

    def sessions(self, role: str) -> int:
        """How many sessions ``role`` has open now."""
        import psycopg

        with psycopg.connect(self.conninfo, autocommit=True) as conn:
            row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE usename = %s", (role,)).fetchone()
        return int(row[0]) if row else 0

    def _admin(self, statement: str) -> None:
        import psycopg

        with psycopg.connect(self.conninfo, autocommit=True) as conn:
            conn.execute(statement)  # type: ignore[arg-type]

    def _as_owner(self, *args: str) -> subprocess.CompletedProcess[str]:
        cmd = list(args)
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=120)

    def create(self) -> None:
        """``initdb``: every role trusted but ``PASSWORD_ROLE`` (its line comes first: the first match wins)."""
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(self.root, user.pw_uid, user.pw_gid)
        self._as_owner(
            str(self.bin / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"
        )
        hba = self.data / "pg_hba.conf"
        hba.write_text(f"local all {PASSWORD_ROLE} scram-sha-256\n" + hba.read_text())

    def start(self) -> None:
        options = f"-k {self.socket_dir} -p 5432 -c listen_addresses='' -c fsync=on -c max_connections=200"
        self._as_owner(
            str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", options, "-l", str(self.root / "log"), "-w", "start"
        )

    def stop(self) -> None:
        """A fast shutdown: the server ends every session (as an operator's restart does)."""
        self._as_owner(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def restart(self) -> None:
        self.stop()
        self.start()

    def crash(self) -> None:
        """``kill -9`` of the postmaster, as a crash would end it, then a wait until each of its
        backends has noticed and exited (until then their shared memory is in use and ``start()``
        is refused). Start it again with ``start()``."""
        postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
        backends = [pid for pid in _pids() if _parent(pid) == postmaster]
        os.kill(postmaster, signal.SIGKILL)
        deadline = time.monotonic() + 60
        while any(Path(f"/proc/{pid}").exists() for pid in [postmaster, *backends]):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the backends of the killed postmaster {postmaster} did not exit")
            time.sleep(0.02)

    def add_password_role(self) -> None:
        import psycopg

        with psycopg.connect(self.conninfo, autocommit=True) as conn:
            conn.execute(f"CREATE ROLE {PASSWORD_ROLE} LOGIN PASSWORD '{PASSWORD}'")
            conn.execute(f"CREATE SCHEMA {PASSWORD_ROLE} AUTHORIZATION {PASSWORD_ROLE}")  # first on its search_path


def _pids() -> list[int]:
    return [int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit()]


def _parent(pid: int) -> int | None:
    """A process's parent (``/proc/PID/stat``: after the command's closing parenthesis, the
    state, then the parent's pid), or ``None`` once it has exited."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rpartition(")")[2].split()[1])


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
        server.create()
        server.start()
        server.add_password_role()
        yield server
    finally:
        with suppress(subprocess.CalledProcessError):
            server.stop()
        shutil.rmtree(root, ignore_errors=True)
