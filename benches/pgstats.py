"""What the PostgreSQL benches read of the server (``swarm_throughput.py``, ``many.py``): its
processes' CPU time from ``/proc``, and its own counters of commits and WAL flushes."""

from __future__ import annotations

import os
import time
from pathlib import Path

import psycopg


def server_cpu(data_dir: Path) -> float:
    """Seconds of CPU the cluster at ``data_dir`` used so far: the postmaster's own and its
    ended children's, and each running child's (backends, WAL writer, checkpointer...)."""
    pid = int((data_dir / "postmaster.pid").read_text().split()[0])
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # ended meanwhile
            continue
        if int(entry) == pid:  # utime, stime, cutime, cstime
            total += sum(int(f) for f in fields[11:15]) / tick
        elif int(fields[1]) == pid:
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def counters(url: str) -> dict[str, int]:
    """The database's committed transactions (``pg_stat_database.xact_commit``: read-only ones
    too) and the server's WAL flushes (``pg_stat_wal.wal_sync``: one per commit that wrote,
    fewer when commits group), once the backends have reported them (at most once a second)."""
    time.sleep(1.5)
    with psycopg.connect(url, autocommit=True) as conn:
        commits = conn.execute("SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()")
        row = commits.fetchone()
        wal = conn.execute("SELECT wal_sync, wal_records FROM pg_stat_wal").fetchone()
    return {
        "commits": int(row[0]) if row else 0,
        "wal_syncs": int(wal[0]) if wal else 0,
        "wal_records": int(wal[1]) if wal else 0,
    }
