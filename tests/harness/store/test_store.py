"""The Store contract, one suite run on both stores (``store_url``: a fresh SQLite file, or a
fresh schema of the session's throwaway PostgreSQL server)."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import io
import logging
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

import msgwire
from msgwire import AssistantMessage, Message, ToolCallBlock, UnknownMessage
from msgwire.errors import DecodeError, StoreError, StoreNotFoundError
from msgwire.harness import Conversation
from msgwire.harness.store import AsyncStore, BadRow, SQLiteStore, SQLStore, open_store
from tests._support.stores import key, raw_sql, wait_until_inside
from tests._support.strategies import examples, messages

WEIRD_IDS = ["it's", 'say "hi"', "a\x00b", "x'; DROP TABLE msgwire_messages; --", "naïve 中 😀", "%s ? $1", ""]


@pytest.fixture
def store(store_url: str) -> Iterator[SQLStore]:
    with open_store(store_url) as s:
        yield s


def _calls(*ids: str) -> AssistantMessage:
    return msgwire.assistant([ToolCallBlock(id=i, name="f", arguments='{"x": 1}') for i in ids], stop_reason="tool_use")


def _approved(message: AssistantMessage, index: int = 0) -> AssistantMessage:
    content = list(message.content)
    content[index] = msgspec.structs.replace(content[index], approval="approved")
    return msgspec.structs.replace(message, content=content)


def _distinct(items: list[Message]) -> list[Message]:
    seen: set[str] = set()
    kept = []
    for m in items:
        k = (
            m.data().get("id")
            if isinstance(m, UnknownMessage) and isinstance(m.data(), dict)
            else getattr(m, "id", None)
        )
        if isinstance(k, str) and k and k not in seen:
            seen.add(k)
            kept.append(m)
    return kept


# --- conversations bound to a store ---------------------------------------------------------------


def test_a_bound_conversation_stores_every_add_and_loads_back_equal(store: SQLStore) -> None:
    c = store.create(system_prompt="Be brief.", modes={"plan": "Plan only.", "act": "Act."}, metadata={"k": [1]})
    c.add(msgwire.user("hello"))
    call = _calls("c1", "c2")
    c.add(call)
    c.update(_approved(call), "tool_call_approved", {"by": "alice"})
    c.add(msgwire.tool_result("c1", "42"))
    c.switch_mode("act", by="alice")
    c.switch_branch("experiment")
    loaded = store.load(c.id)
    assert loaded == c
    assert loaded.verify(head=c.head)
    assert (loaded.mode, loaded.system_prompt, loaded.branch) == ("act", "Act.", "experiment")
    assert [e.seq for e in loaded.entries] == list(range(6))
    assert store.messages(c.id) == c.messages()
    assert store.messages(c.id)[1] == _approved(call)  # the row holds the latest state
    info = store.info(c.id)
    assert (info.entries, info.head, info.mode, info.branch, info.metadata) == (
        6,
        c.head,
        "act",
        "experiment",
        {"k": [1]},
    )


@given(st.lists(messages, max_size=8))
@examples(15, all_health_checks=True)
def test_any_messages_round_trip_through_the_store(store: SQLStore, items: list[Message]) -> None:
    c = store.create()
    for m in _distinct(items):
        c.add(m)
    again = store.load(c.id)
    assert again == c
    assert again.verify()
    assert again.export_audit() == c.export_audit()  # unknown messages byte for byte
    assert store.messages(c.id) == c.messages()


def test_the_store_assigns_seq_and_a_second_handle_catches_up(store: SQLStore) -> None:
    one = store.create()
    two = store.open(one.id)
    one.add(msgwire.user("from one"))
    e = two.add(msgwire.user("from two"))
    assert e.seq == 1  # the store's seq, not the handle's length
    assert [m.content[0].text for m in two.messages()] == ["from one", "from two"]  # type: ignore[union-attr]
    assert two.verify()
    taken = one.sync()
    assert [x.seq for x in taken] == [1]
    assert one == two == store.load(one.id)


def test_appends_are_one_transaction_per_batch_and_idempotent_on_the_message_id(store: SQLStore) -> None:
    c = store.create()
    batch = [msgwire.user(f"m{i}", id=f"m{i}") for i in range(5)]
    first = store.append(c.id, batch)
    assert [e.seq for e in first] == [0, 1, 2, 3, 4]
    again = store.append(c.id, [*batch[3:], msgwire.user("new", id="m5")])  # a retried batch, and one more
    assert [e.seq for e in again] == [3, 4, 5]
    assert again[:2] == first[3:]
    assert [m.id for m in store.messages(c.id)] == [f"m{i}" for i in range(6)]
    assert store.load(c.id).verify()


def test_a_failing_batch_stores_nothing(store: SQLStore) -> None:
    c = store.create()
    store.append(c.id, msgwire.user("one", id="a"))

    class NotJSON:
        pass

    bad = msgwire.tool_result("c", "x", structured_content=NotJSON())
    with pytest.raises(TypeError):
        store.append(c.id, [msgwire.user("two", id="b"), bad])
    assert [m.id for m in store.messages(c.id)] == ["a"]
    assert store.info(c.id).entries == 1


def test_update_is_a_new_entry_and_the_row_takes_the_new_state(store: SQLStore) -> None:
    c = store.create()
    call = _calls("c1")
    store.append(c.id, [msgwire.user("go"), call])
    entry = store.update(c.id, _approved(call), "tool_call_approved", {"by": "bob"})
    assert (entry.seq, entry.decision, entry.audit) == (2, "tool_call_approved", {"by": "bob"})
    assert store.messages(c.id)[1] == _approved(call)
    trail = store.load(c.id)
    assert trail.entries[1].message == call  # the old entry is as it was
    assert trail.verify()
    with pytest.raises(KeyError):
        store.update(c.id, msgwire.user("never stored"), "user_input")
    with pytest.raises(TypeError):
        store.update(c.id, msgwire.user("wrong type", id=call.id), "user_input")


def test_messages_last_n_and_session(store: SQLStore) -> None:
    c = store.create(system_prompt="S")
    store.append(c.id, [msgwire.user(f"m{i}", id=f"m{i}") for i in range(30)])
    assert [m.id for m in store.messages(c.id, last=20)] == [f"m{i}" for i in range(10, 30)]
    assert store.messages(c.id, last=0) == []
    assert len(store.messages(c.id, last=100)) == 30
    session = store.session(c.id, last=3)
    assert (session.id, session.system_prompt, [m.id for m in session.messages]) == (c.id, "S", ["m27", "m28", "m29"])


def test_fork_in_sql_equals_the_conversation_fork(store: SQLStore) -> None:
    c = store.create(system_prompt="Plan only.", modes={"plan": "Plan only.", "act": "Act."}, mode="plan")
    c.add(msgwire.user("go"))
    call = _calls("c1")
    at = c.add(call)
    c.update(_approved(call), "tool_call_approved")
    c.switch_mode("act")
    c.add(msgwire.tool_result("c1", "done"))
    new_id = store.fork(c.id, at=at.id)
    stored = store.load(new_id)
    in_memory = c.fork(at=at.id, id=new_id)
    assert stored.entries == in_memory.entries
    assert stored.messages() == in_memory.messages() == [c.messages()[0], call]  # the call still pending
    assert store.messages(new_id) == in_memory.messages()
    assert (stored.mode, stored.system_prompt, stored.branch, stored.parent) == (
        in_memory.mode,
        in_memory.system_prompt,
        in_memory.branch,
        in_memory.parent,
    )
    assert stored.verify()
    whole = store.load(store.fork(c.id))
    assert whole.entries == c.entries
    assert whole.verify()  # the fork's own header is chained after the entries it kept...
    assert whole.parent is not None
    assert whole.parent.hash == c.head  # ...which end at the parent's head
    forked = store.open(new_id)
    forked.add(msgwire.user("on the fork"))
    assert store.info(new_id).entries == 3
    assert store.info(c.id).entries == 5
    with pytest.raises(KeyError):
        store.fork(c.id, at="no such entry")


def test_list_and_delete(store: SQLStore) -> None:
    a = store.create(agent="alice")
    b = store.create(agent="bob")
    store.append(a.id, msgwire.user("hi"))
    assert [i.id for i in store.conversations()] == [a.id, b.id]
    assert [i.id for i in store.conversations(agent="alice")] == [a.id]
    assert store.delete(a.id) is True
    assert store.delete(a.id) is False
    assert [i.id for i in store.conversations()] == [b.id]
    with pytest.raises(KeyError):
        store.load(a.id)
    with pytest.raises(KeyError):
        store.append(a.id, msgwire.user("gone"))


@pytest.mark.parametrize("weird", WEIRD_IDS)
def test_ids_with_quotes_nuls_and_sql_are_stored_and_found(store: SQLStore, weird: str) -> None:
    cid = weird or "empty-message-id"
    c = store.create(id=cid, agent=weird)
    c.add(msgwire.user("x", id=weird or "m"))
    c.add(msgwire.user("y", id=weird + "2"))
    assert store.load(cid) == c
    assert [i.id for i in store.conversations(agent=weird)] == [cid]
    assert [m.id for m in store.messages(cid)] == [weird or "m", weird + "2"]
    store.register_agent(weird, cid)
    store.post("direct", to=weird, sender=weird)
    assert [m.message.content[0].text for m in store.mail(weird)] == ["direct"]  # type: ignore[union-attr]
    assert store.fork(cid, id=cid + "'fork") == cid + "'fork"
    assert store.delete(cid)
    assert len(store.conversations()) == 1  # the fork and nothing else: no statement was cut short


# --- audit export and import ----------------------------------------------------------------------


def test_export_and_import_of_the_audit_json(store: SQLStore, tmp_path: Any) -> None:
    c = store.create(system_prompt="S", modes={"a": "A"})
    c.add(msgwire.user("hi"))
    c.switch_mode("a")
    c.add(msgwire.assistant("ok"))
    data = store.export_audit(c.id)
    assert data == c.export_audit()
    assert store.export_audit(c.id, format="jsonl") == c.export_audit(format="jsonl")
    store.delete(c.id)
    imported = store.import_audit(data)
    assert imported == Conversation.load_audit(data)
    assert store.load(c.id) == imported
    assert store.load(c.id).verify()
    again = store.import_audit(io.BytesIO(data))  # importing twice changes nothing
    assert again == imported
    assert store.info(c.id).entries == 3
    imported.add(msgwire.user("after the import"))  # bound: stored
    assert store.info(c.id).entries == 4


def test_binding_a_conversation_made_in_memory(store: SQLStore) -> None:
    c = Conversation(system_prompt="S")
    c.add(msgwire.user("before"))
    store.bind(c, agent="zed")
    c.add(msgwire.user("after"))
    assert store.load(c.id) == c
    assert store.info(c.id).agent == "zed"
    other = Conversation(id=c.id)
    other.add(msgwire.user("another past"))
    with pytest.raises(StoreError):
        store.bind(other)


# --- bad rows -------------------------------------------------------------------------------------


def _corrupt(store: SQLStore, cid: str, seq: int) -> None:
    """The entry at ``seq`` and its message (whose bytes the entry holds) made unreadable."""
    body = b'{"id":"e","seq":1,"timestamp":"not a time","message":{oops},"decision":"x","audit":{}}'
    at = body.index(b"{oops")
    raw_sql(
        store,
        "UPDATE msgwire_entries SET body = ?, message_at = ?, message_len = ? WHERE conversation_id = ? AND seq = ?",
        (body, at, len(b"{oops}"), key(store, cid), seq),
    )


def test_a_bad_row_raises_a_decode_error_naming_conversation_and_seq(store: SQLStore) -> None:
    c = store.create(id="conv-7")
    store.append(c.id, [msgwire.user(f"m{i}") for i in range(3)])
    _corrupt(store, c.id, 1)
    with pytest.raises(DecodeError, match=r"conversation 'conv-7', seq 1") as caught:
        store.load(c.id)
    assert (caught.value.conversation_id, caught.value.seq) == ("conv-7", 1)  # type: ignore[attr-defined]
    with pytest.raises(DecodeError, match=r"conversation 'conv-7', seq 1"):
        store.messages(c.id)


def test_on_error_skip_returns_the_rest_and_reports_the_skipped(store: SQLStore, caplog: Any) -> None:
    c = store.create(id="conv-8")
    store.append(c.id, [msgwire.user(f"m{i}", id=f"m{i}") for i in range(3)])
    _corrupt(store, c.id, 1)
    bad: list[BadRow] = []
    loaded = store.load(c.id, on_error=bad.append)
    assert [e.seq for e in loaded.entries] == [0, 2]
    assert [(b.conversation_id, b.seq, b.table) for b in bad] == [("conv-8", 1, "entries")]
    assert not loaded.verify()  # the chain shows the gap
    with caplog.at_level(logging.WARNING, logger="msgwire.harness.store"):
        assert [m.id for m in store.messages(c.id, on_error="skip")] == ["m0", "m2"]
    assert "seq 1" in caplog.text


_ODD_TIMES = [
    dt.datetime(1, 1, 1, tzinfo=dt.UTC),
    dt.datetime(999, 12, 31, 23, 59, 59, 999_999, tzinfo=dt.UTC),
    dt.datetime(2026, 2, 28, 12, 0, 0, 1, tzinfo=dt.UTC),
    dt.datetime(2026, 11, 28, 12, 30, 0, 120_000, tzinfo=dt.UTC),
    dt.datetime(9999, 12, 31, 23, 59, 59, tzinfo=dt.UTC),
    dt.datetime(2026, 6, 1, 9, 0, tzinfo=dt.timezone(dt.timedelta(hours=5, minutes=30))),
]


def test_timestamps_are_stored_and_read_back_exactly_on_both_stores(store: SQLStore) -> None:
    """Message and entry timestamps come back as the instants they were, microseconds and odd
    years included; SQLite's text columns hold ``isoformat()`` (the store writes a UTC time's
    text through msgspec, which must give the same characters)."""
    c = store.create()
    sent = [msgwire.user(f"m{i}", id=f"m{i}", timestamp=t) for i, t in enumerate(_ODD_TIMES)]
    entries = store.append(c.id, sent)
    rows = [r for page in store.iter_rows("messages", conversation_id=c.id) for r in page]
    assert [r[4] for r in rows] == _ODD_TIMES
    assert [m.timestamp for m in store.messages(c.id)] == _ODD_TIMES  # type: ignore[union-attr]
    stored = [r[5] for page in store.iter_rows("entries", conversation_id=c.id) for r in page]
    assert stored == [e.timestamp for e in entries]
    if isinstance(store, SQLiteStore):
        texts = raw_sql(
            store, "SELECT timestamp FROM msgwire_message_rows WHERE conversation_id = ? ORDER BY seq", [c.id]
        )
        assert [t for (t,) in texts] == [t.isoformat() for t in _ODD_TIMES]
        texts = raw_sql(store, "SELECT timestamp FROM msgwire_entries WHERE conversation_id = ? ORDER BY seq", [c.id])
        assert [t for (t,) in texts] == [e.timestamp.isoformat() for e in entries]


def test_updated_at_is_when_the_last_entry_was_appended_on_both_stores(store: SQLStore) -> None:
    """A conversation's ``updated_at`` is the timestamp of its last entry, whether appended by
    ``append``, by a bound conversation or imported."""
    c = store.create()
    store.append(c.id, [msgwire.user("a"), msgwire.user("b")])
    assert store.info(c.id).updated_at == store.load(c.id).entries[-1].timestamp
    c.add(msgwire.user("c"))
    assert store.info(c.id).updated_at == store.load(c.id).entries[-1].timestamp == c.entries[-1].timestamp
    made = Conversation()
    made.add(msgwire.user("d"))
    store.bind(made)
    assert store.info(made.id).updated_at == made.entries[-1].timestamp


def test_append_takes_one_message_or_any_sequence_of_them_and_nothing_else(store: SQLStore) -> None:
    c = store.create()

    class Messages(Sequence[Message]):
        def __init__(self, *items: Message) -> None:
            self.items = items

        def __getitem__(self, i: Any) -> Any:
            return self.items[i]

        def __len__(self) -> int:
            return len(self.items)

    store.append(c.id, msgwire.user("one", id="a"))
    store.append(c.id, (msgwire.user("two", id="b"), msgwire.user("three", id="c")))
    store.append(c.id, Messages(msgwire.user("four", id="d")))
    assert [m.id for m in store.messages(c.id)] == ["a", "b", "c", "d"]
    for bad, named in (("text", "item 0 is str"), ([msgwire.user("e"), {"role": "user"}], "item 1 is dict")):
        with pytest.raises(TypeError, match=named):
            store.append(c.id, bad)  # type: ignore[arg-type]
    assert store.info(c.id).entries == 4


def test_timestamps_come_back_in_utc_on_both_stores(store: SQLStore) -> None:
    """One ``tzinfo`` whatever the backend: ``datetime.timezone.utc`` (PostgreSQL gave the
    session's zone, ``ZoneInfo('Etc/UTC')``: equal instants, other reprs and serializations)."""
    c = store.create(agent="a")
    c.add(msgwire.user("hi"))
    store.register_agent("a", c.id)
    store.post("mail", to="a")
    info = store.info(c.id)
    stamps = {
        "info.created_at": info.created_at,
        "info.updated_at": info.updated_at,
        "conversations()": store.conversations()[0].updated_at,
        "entry": store.load(c.id).entries[0].timestamp,
        "message": store.messages(c.id)[0].timestamp,  # type: ignore[union-attr]
        "agent": store.agent("a").updated_at,
        "mail": store.mail("a")[0].created_at,
    }
    assert {k: v.tzinfo for k, v in stamps.items()} == dict.fromkeys(stamps, dt.UTC)


# --- waiting for mail -----------------------------------------------------------------------------


def test_wake_waiters_ends_every_wait_at_once(store: SQLStore) -> None:
    """What ``Swarm.stop`` calls, so that no idle agent sleeps out its poll: one call ends the
    waits of 600 s of every thread waiting, long before any of them would time out."""
    c = store.create()
    store.register_agent("a", c.id)
    store.post("one", to="a")
    listener = getattr(store, "_listener", None)  # PostgreSQL's LISTEN thread: its first look wakes every waiter
    if listener is not None:
        store.wait_mail(1, 0.01)  # starts it
        wait_until_inside([listener._thread], "_read")  # past that look, which would hide a wake of one waiter
    returned: list[int] = []
    waiters = [threading.Thread(target=lambda: returned.append(store.wait_mail(1, 600)), daemon=True) for _ in range(3)]
    for thread in waiters:
        thread.start()
    wait_until_inside(waiters, "_wait_local")  # each has begun its wait (a wake before that is not for it)
    called = time.monotonic()
    store.wake_waiters()  # once: it must end every wait, not one per call
    for thread in waiters:
        thread.join(max(0.0, called + 30 - time.monotonic()))
    assert not any(thread.is_alive() for thread in waiters), "a wait of 600 s outlived wake_waiters by 30 s"
    assert returned == [1, 1, 1]  # the last seq, as at a timeout


# --- opening -------------------------------------------------------------------------------------


def test_open_store_refuses_other_schemes_and_takes_any_path_as_sqlite(tmp_path: Any) -> None:
    """Newcomer findings 13 and 2: ``mysql://`` was opened as a SQLite file; a path with ``=``
    in it was taken for a libpq connection string."""
    with pytest.raises(ValueError, match="unsupported store URL scheme 'mysql'"):
        open_store("mysql://u:p@h/db")
    with open_store(tmp_path / "a=b c.db") as store:
        assert type(store).__name__ == "SQLiteStore"
    assert (tmp_path / "a=b c.db").exists()


# --- schema ---------------------------------------------------------------------------------------


def test_the_schema_is_versioned_and_a_newer_one_is_refused(store_url: str) -> None:
    store = open_store(store_url)
    assert raw_sql(store, "SELECT version FROM msgwire_schema ORDER BY version") == [(1,), (2,), (3,), (4,), (5,)]
    store.close()
    again = open_store(store_url)  # opening again applies nothing twice
    assert raw_sql(again, "SELECT count(*) FROM msgwire_schema") == [(5,)]
    raw_sql(again, "INSERT INTO msgwire_schema (version, applied_at) VALUES (99, ?)", ("2026-01-01T00:00:00+00:00",))
    again.close()
    with pytest.raises(StoreError, match="version 99"):
        open_store(store_url)


def _tables(url: str) -> list[str]:
    """msgwire's tables in the database ``url`` names (looked at without msgwire)."""
    if url.startswith("sqlite:///"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
            rows = conn.execute("SELECT name FROM sqlite_master WHERE name LIKE 'msgwire%'").fetchall()
        return sorted(r[0] for r in rows)
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT tablename FROM pg_tables WHERE tablename LIKE 'msgwire%' AND schemaname = current_schema()"
        )
        return sorted(r[0] for r in rows.fetchall())


def test_create_false_opens_a_store_that_exists_and_makes_none(store_url: str, tmp_path: Any) -> None:
    """To read (``msgwire sessions``, ``audit``): a database without msgwire's tables, or no
    SQLite file at all, is ``StoreNotFoundError``, and nothing is created; once made, it opens."""
    missing = tmp_path / "typo.db"
    with pytest.raises(StoreNotFoundError, match="no such file"):
        open_store(f"sqlite:///{missing}", create=False)
    assert not missing.exists()
    someone_elses = store_url.removeprefix("sqlite:///")
    if store_url.startswith("sqlite:///"):
        with contextlib.closing(sqlite3.connect(someone_elses)) as conn:
            conn.execute("CREATE TABLE notes (text TEXT)")
    with pytest.raises(StoreNotFoundError, match="holds no msgwire tables"):
        open_store(store_url, create=False)
    assert _tables(store_url) == []
    if store_url.startswith("sqlite:///"):  # not even switched to WAL mode
        with contextlib.closing(sqlite3.connect(someone_elses)) as conn:
            assert conn.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    with open_store(store_url) as made:
        cid = made.create().id
    with open_store(store_url, create=False) as read:
        assert [info.id for info in read.conversations()] == [cid]


# --- async ----------------------------------------------------------------------------------------


def test_the_async_store_has_the_same_calls(store: SQLStore) -> None:
    async def main() -> None:
        astore = AsyncStore(store)
        c = await astore.create(system_prompt="S")
        entries = await asyncio.gather(*(astore.append(c.id, msgwire.user(f"m{i}", id=f"m{i}")) for i in range(20)))
        assert sorted(e[0].seq for e in entries) == list(range(20))
        assert len(await astore.messages(c.id)) == 20
        assert (await astore.load(c.id)).verify()

    asyncio.run(main())


def test_the_async_store_runs_several_calls_as_one_job_in_its_pool(store: SQLStore) -> None:
    def work(sync: SQLStore) -> tuple[str, int]:
        c = sync.create()
        sync.append(c.id, [msgwire.user("a"), msgwire.user("b")])
        return threading.current_thread().name, len(sync.messages(c.id))

    async def main() -> tuple[str, int]:
        return await AsyncStore(store).run(work)

    thread, count = asyncio.run(main())
    assert thread.startswith("msgwire-store")
    assert count == 2
