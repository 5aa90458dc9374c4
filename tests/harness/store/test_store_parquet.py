"""export_parquet, read back with DuckDB (on both stores)."""

from __future__ import annotations

from pathlib import Path

import duckdb

import msgwire
from msgwire.harness.store import open_store
from msgwire.harness.store.parquet import export_parquet


def test_parquet_export_reads_back_in_duckdb(store_url: str, tmp_path: Path) -> None:
    store = open_store(store_url)
    a = store.create(id="a'1")
    a.add(msgwire.user("hello"))
    a.add(msgwire.assistant("hi there"))
    b = store.create(id="b\x002")
    store.append(b.id, [msgwire.user(f"m{i}", id=f"m{i}") for i in range(25)])
    messages, entries = export_parquet(store, tmp_path / "out", batch=10)  # pages of 10 rows
    db = duckdb.connect()
    rows = db.execute(
        "SELECT conversation_id, count(*), min(seq), max(seq) FROM read_parquet(?) GROUP BY 1 ORDER BY 1",
        [str(messages)],
    ).fetchall()
    assert rows == [("a'1", 2, 0, 1), ("b\x002", 25, 0, 24)]
    kinds = db.execute(
        "SELECT data_json::JSON ->> '$.type', count(*) FROM read_parquet(?) GROUP BY 1 ORDER BY 1", [str(messages)]
    ).fetchall()
    assert kinds == [("assistant", 1), ("user", 26)]
    trail = db.execute(
        "SELECT seq, id, decision, hash, body FROM read_parquet(?) WHERE conversation_id = ? ORDER BY seq",
        [str(entries), "a'1"],
    ).fetchall()
    expected = store.load("a'1").entries
    assert [(r[0], r[1], r[2], r[3]) for r in trail] == [(e.seq, e.id, e.decision, e.hash) for e in expected]
    texts = db.execute(
        "SELECT body::JSON ->> '$.message.content[0].text' FROM read_parquet(?) WHERE conversation_id = ? ORDER BY seq",
        [str(entries), "a'1"],
    ).fetchall()
    assert texts == [("hello",), ("hi there",)]
    store.close()
