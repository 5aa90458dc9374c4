"""Stores written by earlier versions of the schema migrate and still read and verify: the
fixtures (tests/fixtures/harness/PROVENANCE.md) are SQLite files of versions 1, 2 and 4 written
by msgwire itself; on PostgreSQL their rows are copied into tables made by the same migrations."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import msgwire
from msgwire.harness.store import open_store
from msgwire.harness.store.schema import MIGRATIONS, POSTGRES
from tests._support.stores import raw_sql

FIXTURES = Path(__file__).parents[2] / "fixtures" / "harness"
EXPECTED: dict[str, Any] = json.loads((FIXTURES / "store-expected.json").read_text())
HELD = {1: ["v1-trail"], 2: ["v1-trail", "chained", "forked"]}


def _old_store(url: str, version: int) -> None:
    """The store of schema ``version`` at ``url`` (as msgwire of that version left it)."""
    script = (FIXTURES / f"store-v{version}.sql").read_text()
    if url.startswith("sqlite:///"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
            conn.executescript(script)
        return
    import psycopg

    old = sqlite3.connect(":memory:")
    old.executescript(script)
    with psycopg.connect(url) as conn:
        conn.execute("CREATE TABLE msgwire_schema (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL)")
        for v in range(1, version + 1):
            for statement in MIGRATIONS[v](POSTGRES):
                conn.execute(statement)  # type: ignore[arg-type]
        tables = [r[0] for r in old.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        tables.sort(key=lambda t: t != "msgwire_conversations")  # what the others refer to, first
        for table in tables:
            bytea = {
                r[0]
                for r in conn.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_name = %s "
                    "AND table_schema = current_schema() AND data_type = 'bytea'",
                    (table,),
                )
            }
            cur = old.execute(f"SELECT * FROM {table}")
            names = [d[0] for d in cur.description]
            rows = [
                [v.encode() if n in bytea and isinstance(v, str) else v for n, v in zip(names, row, strict=True)]
                for row in cur
            ]
            if rows:
                kept = " OVERRIDING SYSTEM VALUE" if table == "msgwire_mail" else ""  # its seqs, as they were
                sql = f"INSERT INTO {table} ({', '.join(names)}){kept} VALUES ({', '.join(['%s'] * len(names))})"
                conn.cursor().executemany(sql, rows)  # type: ignore[arg-type]
        # the identity goes on after the seqs copied, as it would have in the server that wrote them
        conn.execute("SELECT setval(pg_get_serial_sequence('msgwire_mail', 'seq'), max(seq)) FROM msgwire_mail")


@pytest.mark.parametrize("version", [1, 2])
def test_a_store_of_an_earlier_schema_migrates_and_still_reads_and_verifies(store_url: str, version: int) -> None:
    """Opening it applies the later versions once; every conversation then verifies against
    its stored head, reads the messages it held (each at its latest state: the approved tool
    call, the fork's as of its fork point), and takes a new message (the careful path and the
    assumed head's both) and a fork, still verifying."""
    _old_store(store_url, version)
    store = open_store(store_url)
    assert raw_sql(store, "SELECT version FROM msgwire_schema ORDER BY version") == [(1,), (2,), (3,), (4,), (5,)]
    if not store_url.startswith("sqlite"):  # version 4: entry bodies uncompressed (rows already there stay)
        storage = (
            "SELECT attstorage FROM pg_attribute WHERE attrelid = 'msgwire_entries'::regclass AND attname = 'body'"
        )
        assert raw_sql(store, storage) == [("e",)]
    for cid in HELD[version]:
        expected = EXPECTED[cid]
        info = store.info(cid)
        assert (info.head, info.entries) == (expected["head"], expected["entries"])
        assert store.load(cid).verify(head=info.head)
        assert json.loads(msgwire.dumps(store.messages(cid))) == expected["messages"]
        assert json.loads(msgwire.dumps(store.messages(cid, last=2))) == expected["messages"][-2:]
    store.close()

    again = open_store(store_url)  # nothing applied twice
    assert raw_sql(again, "SELECT count(*) FROM msgwire_schema") == [(5,)]
    for cid in HELD[version]:
        conversation = again.open(cid)
        conversation.add(msgwire.user("after the migration"))  # the head read by open(): assumed
        again.append(cid, [msgwire.user("and a batch"), msgwire.user("of two")])  # remembered head
        again.append(cid, [msgwire.user("after the migration", id=conversation.messages()[-1].id)])  # stored
        assert again.load(cid).verify(head=again.info(cid).head)
        assert [m.text for m in again.messages(cid, last=3)] == [  # type: ignore[union-attr]
            "after the migration",
            "and a batch",
            "of two",
        ]
        fork = again.fork(cid)
        assert again.load(fork).verify(head=again.info(fork).head)
        assert again.messages(fork) == again.messages(cid)
    again.close()


def test_a_swarm_of_schema_4_migrates_with_its_mail_and_no_seq_is_given_twice(store_url: str) -> None:
    """Version 5 (mail that expires or is deleted): the mail and the agents' marks are kept as
    they were (the same seqs; on SQLite the table is made again, with ``AUTOINCREMENT``), every
    mail is live (no ``expires_at``), and once all of it is cleared the next post still gets a
    seq above every one the agents have seen, so it reaches them."""
    _old_store(store_url, 4)
    with open_store(store_url) as store:
        assert raw_sql(store, "SELECT version FROM msgwire_schema ORDER BY version") == [(1,), (2,), (3,), (4,), (5,)]
        assert [(a.name, a.mail_seen, a.state) for a in store.agents()] == [
            ("miner", 0, "running"),
            ("scout", 1, "running"),
        ]
        waiting = store.mail("miner")
        assert [(m.seq, m.kind, m.sender, m.target) for m in waiting] == [
            (1, "broadcast", "commander", None),
            (2, "broadcast", "commander", "miner"),
            (3, "direct", "scout", "miner"),
        ]
        assert [m.message.text for m in waiting] == ["Survey the belt.", "Miners only: dig.", "Mine iron."]
        assert [m.expires_at for m in waiting] == [None, None, None]
        assert store.mail("scout") == []
        assert store.latest_broadcast("scout").text == "Survey the belt."  # type: ignore[union-attr]
        assert store.latest_broadcast("miner").text == "Miners only: dig."  # type: ignore[union-attr]
        assert store.load("scout-conversation").verify(head=store.info("scout-conversation").head)

        assert store.clear_mail() == 3
        later = store.post("Next", to="miner", expires=60)
        assert later.seq == 4
        assert later.expires_at is not None
        assert [e.message.text for e in store.deliver("miner")] == ["Next"]  # type: ignore[union-attr]
