"""A swarm's mail on both stores (``store_url``): what deleting a conversation deletes, clearing
mail (``clear_mail``), mail that expires (``expires=``), and mail seqs never given twice (an
agent's ``mail_seen`` is one)."""

from __future__ import annotations

import asyncio
import datetime as dt
import sqlite3
import threading
import time
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest

import msgwire
from msgwire.harness.store import AsyncStore, SQLiteStore, SQLStore, Store, SwarmStore, open_store
from tests._support.stores import raw_sql

HOUR = dt.timedelta(hours=1)


@pytest.fixture
def store(store_url: str) -> Iterator[SQLStore]:
    with open_store(store_url) as s:
        yield s


def _agents(store: SQLStore, *names: str) -> dict[str, str]:
    """Agents registered with a conversation each: name -> conversation id."""
    ids = {}
    for name in names:
        ids[name] = store.create(agent=name).id
        store.register_agent(name, ids[name])
    return ids


def _texts(mails: Any) -> list[str]:
    return [m.message.text for m in mails]


def _stored(store: SQLStore) -> list[tuple[str, str | None]]:
    """Every mail row: (its text, its target), in seq order."""
    rows = raw_sql(store, "SELECT data_json, target FROM msgwire_mail ORDER BY seq")
    return [
        (msgwire.loads(data, type=msgwire.UserMessage).text, None if target is None else _text(target))
        for data, target in rows
    ]


def _text(value: Any) -> str:
    return value if isinstance(value, str) else bytes(value).decode()


def _age(store: SQLStore, column: str, seq: int, by: dt.timedelta) -> None:
    """Move a mail's ``created_at`` or ``expires_at`` into the past (instead of sleeping)."""
    at = msgwire.types.now() - by
    raw_sql(store, f"UPDATE msgwire_mail SET {column} = ? WHERE seq = ?", (_as_stored(store, at), seq))


def _as_stored(store: SQLStore, at: dt.datetime) -> Any:
    return at.isoformat() if isinstance(store, SQLiteStore) else at


# --- deleting a conversation ----------------------------------------------------------------------


def test_deleting_an_agents_conversation_deletes_the_mail_only_it_could_read_and_the_direct_messages_it_sent(
    store: SQLStore,
) -> None:
    """Its agent's mail: direct messages to it and its row of a group broadcast (nobody else
    could ever read them), and the direct messages it sent. What others were broadcast stays,
    even when this agent sent it: a broadcast is its recipients' mission, not one conversation's."""
    ids = _agents(store, "a", "b", "c")
    store.broadcast("Mission", sender="commander")
    store.broadcast("Group", to=["a", "b"], sender="commander")
    store.post("To a", to="a", sender="commander")
    store.post("From a to b", to="b", sender="a")
    store.broadcast("From a to all", sender="a")
    store.broadcast("From a to c", to=["c"], sender="a")

    assert store.delete(ids["a"])

    assert _stored(store) == [("Mission", None), ("Group", "b"), ("From a to all", None), ("From a to c", "c")]
    assert _texts(store.mail("b")) == ["Mission", "Group", "From a to all"]
    assert store.latest_broadcast("b").text == "From a to all"  # type: ignore[union-attr]
    assert [a.name for a in store.agents()] == ["b", "c"]


def test_deleting_the_last_agent_deletes_the_swarms_broadcasts_to_everyone(store: SQLStore) -> None:
    """A broadcast to everyone is the swarm's, not one conversation's: it stays while an agent
    remains (an agent added later inherits it), and goes with the last one, so that a new
    agent on a store whose conversations were all deleted inherits nothing (finding 5 of
    newcomer-turn4: yesterday's mission drove it, 878 model calls in 5 s)."""
    plain = store.create().id  # no agent's
    store.broadcast("Posted before any agent joined")
    assert store.delete(plain)
    assert _stored(store) == [("Posted before any agent joined", None)]  # no swarm ended

    ids = _agents(store, "a", "b")
    mission = store.broadcast("Survey the belt")
    store.delete(ids["a"])
    assert store.latest_broadcast().text == "Survey the belt"  # type: ignore[union-attr]
    store.delete(ids["b"])
    assert _stored(store) == []
    assert store.latest_broadcast() is None
    _agents(store, "new")
    assert store.latest_broadcast("new") is None
    assert store.mail("new") == []
    assert store.post("Today's task", to="new").seq > mission.seq  # no seq given twice


# --- clearing mail --------------------------------------------------------------------------------


def test_clear_mail_deletes_all_of_it_one_agents_or_the_older_and_says_how_many(store: SQLStore) -> None:
    _agents(store, "a", "b")
    store.post("To a", to="a")
    store.post("To b", to="b")
    store.broadcast("Mission")
    old = store.broadcast("Group", to=["a", "b"])  # a row per member

    assert store.clear_mail(to="a") == 2  # its direct message and its row of the group broadcast
    assert _texts(store.mail("a")) == ["Mission"]
    assert _texts(store.mail("b")) == ["To b", "Mission", "Group"]

    assert store.clear_mail(older_than=3600) == 0
    _age(store, "created_at", old.seq, 2 * HOUR)
    assert store.clear_mail(older_than=dt.timedelta(hours=1)) == 1  # posted two hours ago
    assert _texts(store.mail("b")) == ["To b", "Mission"]

    assert store.clear_mail() == 2
    assert store.mail("a") == store.mail("b") == []
    assert store.latest_broadcast("a") is None


def test_clear_mail_refuses_what_it_cannot_mean(store: SQLStore) -> None:
    _agents(store, "a")
    with pytest.raises(KeyError, match="'nobody'"):
        store.clear_mail(to="nobody")
    with pytest.raises(ValueError, match="older_than"):
        store.clear_mail(older_than=-1)
    with pytest.raises(TypeError, match="older_than"):
        store.clear_mail(older_than="1")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="older_than"):
        store.clear_mail(older_than=True)


def test_mail_posted_after_a_clear_reaches_its_agent(store: SQLStore) -> None:
    """A mail's seq is never given twice: an agent's ``mail_seen`` mark is one, so a new mail
    under a seq it has seen would never reach it (SQLite's rowid gives the highest again
    after a delete; the mail table has ``AUTOINCREMENT`` since schema version 5)."""
    ids = _agents(store, "a")
    first = store.post("First", to="a")
    store.deliver("a")
    assert store.clear_mail() == 1
    second = store.post("Second", to="a")
    assert second.seq > first.seq
    assert _texts(store.mail("a")) == ["Second"]
    store.deliver("a")
    assert [m.text for m in store.messages(ids["a"])] == ["First", "Second"]  # type: ignore[union-attr]


# --- a post racing an agent's idle write -----------------------------------------------------------


class _OpenPost:
    """A post's transaction held open on a connection of its own, as ``post`` writes it: the mail
    row, and its recipient's row set running with its counter reset. ``commit()`` ends it."""

    def __init__(self, store: SQLStore, to: str, text: str) -> None:
        data = msgspec.json.encode(msgwire.user(text, source="direct")).decode()
        columns = (
            "INSERT INTO msgwire_mail (kind, target, created_at, message_id, data_json) VALUES ('direct', ?, ?, ?, ?)"
        )
        running = "UPDATE msgwire_agents SET state = 'running', encouragement = 0 WHERE name = ?"
        if isinstance(store, SQLiteStore):
            self.conn: Any = sqlite3.connect(store.path, isolation_level=None)
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.execute(columns, (to, msgwire.types.now().isoformat(), text, data))
            self.conn.execute(running, (to,))
        else:
            import psycopg

            self.conn = psycopg.connect(store.conninfo)  # the first statement begins the transaction
            self.conn.execute(columns.replace("?", "%s"), (to.encode(), msgwire.types.now(), text.encode(), data))
            self.conn.execute(running.replace("?", "%s"), (to.encode(),))

    def commit(self) -> None:
        self.conn.execute("COMMIT") if isinstance(self.conn, sqlite3.Connection) else self.conn.commit()
        self.conn.close()


def _waiting_for_a_lock(store: SQLStore) -> bool:
    """Whether a statement of the store's waits for a row lock (PostgreSQL; SQLite: assumed, as
    its writer waits for the database's one lock, which changes nothing of what it then reads)."""
    if isinstance(store, SQLiteStore):
        return True
    rows = raw_sql(store, "SELECT count(*) FROM pg_locks WHERE NOT granted")
    return rows[0][0] > 0


def test_an_agent_set_idle_while_a_post_starts_it_stays_running_with_the_mail(store: SQLStore) -> None:
    """A post and an agent's last step racing for the agent's row: the post wins (it started the
    agent, and its mail must be taken). Before, on PostgreSQL, ``record_step``'s ``UPDATE``,
    having waited for the post's lock on the row, rechecked the row but read the mail table as
    it was before the post: the agent went idle with the post's mail waiting, and waited for
    mail above it (until the next post)."""
    _agents(store, "a")
    post = _OpenPost(store, "a", "Mine iron")
    went_idle: list[bool] = []
    writer = threading.Thread(target=lambda: went_idle.append(store.record_step("a", encouragement=3, idle=True)))
    writer.start()
    deadline = time.monotonic() + 30
    while not _waiting_for_a_lock(store):
        assert time.monotonic() < deadline, "the agent's write never waited for the post's lock"
        time.sleep(0.01)
    time.sleep(0.1)  # SQLite: its writer in its busy wait (the outcome is the same either way)
    post.commit()
    writer.join(30)
    assert went_idle == [False]
    state = store.agent("a")
    assert (state.state, state.encouragement) == ("running", 0)
    assert _texts(store.mail("a")) == ["Mine iron"]
    assert store.view("a").state == "running"


# --- mail that expires ----------------------------------------------------------------------------


def test_expired_mail_is_neither_taken_nor_a_mission_nor_waiting(store: SQLStore) -> None:
    """Once expired, a mail is as if deleted: not delivered (the agent's mark passes it), no
    agent's mission, and no reason to stay running; the next post deletes it."""
    ids = _agents(store, "a", "b")
    store.broadcast("Standing orders")
    temporary = store.broadcast("Until noon: dig", expires=3600)
    task = store.post("Quick task", to="a", expires=dt.timedelta(minutes=5))
    assert temporary.expires_at is not None
    assert task.expires_at is not None
    assert dt.timedelta(minutes=59) < temporary.expires_at - temporary.created_at <= HOUR
    assert [m.expires_at for m in store.mail("a")] == [None, temporary.expires_at, task.expires_at]
    assert store.latest_broadcast("a").text == "Until noon: dig"  # type: ignore[union-attr]

    _age(store, "expires_at", temporary.seq, dt.timedelta(seconds=1))
    _age(store, "expires_at", task.seq, dt.timedelta(seconds=1))

    assert _texts(store.mail("a")) == ["Standing orders"]
    assert store.latest_broadcast("a").text == "Standing orders"  # type: ignore[union-attr]
    assert [e.message.text for e in store.deliver("a")] == ["Standing orders"]  # type: ignore[union-attr]
    assert store.agent("a").mail_seen == task.seq  # passed, not taken
    assert store.deliver("a") == []
    store.deliver("b")
    assert store.record_step("b", idle=True)  # nothing live waits for it
    assert store.agent("b").state == "idle"
    assert [m.text for m in store.messages(ids["a"])] == ["Standing orders"]  # type: ignore[union-attr]

    store.broadcast("Next", expires=dt.datetime.now(dt.UTC) + HOUR)
    assert _stored(store) == [("Standing orders", None), ("Next", None)]  # the expired ones deleted


def test_an_expiry_must_be_in_the_future(store: SQLStore) -> None:
    _agents(store, "a")
    for expires in (0, -1.5, dt.timedelta(0), dt.datetime.now(dt.UTC) - HOUR, float("nan")):
        with pytest.raises(ValueError, match="expires"):
            store.post("x", to="a", expires=expires)
    with pytest.raises(ValueError, match="expires"):
        store.broadcast("x", expires=dt.datetime(2099, 1, 1))  # naive: which zone?
    for wrong in ("60", True):
        with pytest.raises(TypeError, match="expires"):
            store.broadcast("x", expires=wrong)  # type: ignore[arg-type]
    assert store.mail("a") == []


# --- the protocol and the async store -------------------------------------------------------------


def test_the_async_store_and_the_protocols_have_the_mail_calls(store: SQLStore) -> None:
    assert isinstance(store, SwarmStore)
    assert isinstance(store, Store)
    for name in ("clear_mail", "post", "broadcast"):
        assert callable(getattr(SwarmStore, name))

    async def main() -> None:
        astore = AsyncStore(store)
        conversation = await astore.create(agent="a")
        await astore.register_agent("a", conversation.id)
        mail = await astore.broadcast("Mission", expires=60)
        assert mail.expires_at is not None
        assert await astore.clear_mail(to="a") == 0
        assert await astore.clear_mail() == 1

    asyncio.run(main())


def test_a_wait_after_the_newest_mail_was_deleted_neither_spins_nor_misses_the_next(store: SQLStore) -> None:
    """Deleting the newest mail lowers ``mail_seq`` below a seq this process saw posted; a wait
    must not take that seq for new mail (it looked at the table in a loop until its timeout,
    as an idle agent's wait would after a ``clear_mail``), and the next post still wakes it."""
    _agents(store, "a")
    store.post("Seen here", to="a")
    store.clear_mail()
    seen = store.mail_seq()
    looks = 0
    plain = store.mail_seq

    def counted() -> int:
        nonlocal looks
        looks += 1
        return plain()

    store.mail_seq = counted  # type: ignore[method-assign]
    assert store.wait_mail(seen, 1.0) == seen
    assert looks < 10  # the first look and the last, and a few polls (SQLite: every 0.2 s)

    returned: list[int] = []
    waiter = threading.Thread(target=lambda: returned.append(store.wait_mail(seen, 60)))
    waiter.start()
    posted = store.post("Next", to="a")
    waiter.join(60)
    assert returned == [posted.seq]


def test_a_post_keeps_every_character_its_one_query_carries(store: SQLStore) -> None:
    """On PostgreSQL a post's statements leave as one query, their values written into it as
    SQL literals (psycopg's client-side binding): quotes, backslashes, percent signs, dollar
    quotes, NUL escapes and characters outside ASCII come back as they were posted, in the
    mail's text, its sender and its target, and its times to the microsecond; a direct message
    to no such agent stores nothing."""
    odd = "it's 100% \\'quoted\\' $$ $1 ?; -- \\x00 \u00e9\u4e2d\U0001f600 \"q\" %s %(x)s \\\\"
    names = _agents(store, "o'brien", "50% \\ $1")
    for name in names:
        mail = store.post(odd + name, to=name, sender=odd, expires=HOUR)
        assert (mail.sender, mail.target) == (odd, name)
        taken = store.mail(name)
        assert _texts(taken) == [odd + name]
        assert (taken[0].sender, taken[0].target, taken[0].seq) == (odd, name, mail.seq)
        assert taken[0].created_at == mail.created_at
        assert taken[0].expires_at == mail.expires_at
    with pytest.raises(KeyError, match="no agent"):
        store.post(odd, to="it's nobody")
    assert _stored(store) == [(odd + name, name) for name in names]  # nothing for nobody
