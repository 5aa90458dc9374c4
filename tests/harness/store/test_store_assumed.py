"""Appends after an assumed head (``store/trail.py``): a store remembers the head it last
committed or read, seals after it without reading, and lets the database check it. Here: two
stores racing on one conversation keep every append, gap-free and verified; a remembered head
the stored one no longer is (the conversation replaced; its header changed under a header
change) is refused and the append done the careful way; on PostgreSQL, an append whose commit
reply was lost is found stored, not written twice, and an append of a new message to a bound
conversation is one round trip (``tests._support.roundtrips``)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import msgwire
from msgwire import Message, UnknownMessage, loads
from msgwire.harness.audit import message_key
from msgwire.harness.store import SQLStore, open_store
from msgwire.harness.store.trail import _HEADS_KEPT
from tests._support.postgres import PostgresServer
from tests._support.roundtrips import RoundTrips

ROUNDS = 40
FIXTURES = Path(__file__).parents[2] / "fixtures" / "harness"


def _check(store: SQLStore, conversation_id: str, ids: list[str]) -> None:
    """The trail holds exactly ``ids`` (each once), its seq gap-free, and verifies."""
    trail = store.load(conversation_id)
    assert [e.seq for e in trail.entries] == list(range(len(trail.entries)))
    assert sorted(message_key(e.message) or e.id for e in trail.entries) == sorted(ids)
    assert trail.verify(head=store.info(conversation_id).head)


def test_two_stores_racing_on_one_conversation_keep_every_append_gap_free_and_verified(store_url: str) -> None:
    """Two store objects (as two processes: each remembers its own heads) append to one
    conversation at once, single messages, batches and a bound conversation's adds: each
    store's remembered head is moved by the other all the time, and every append is kept."""
    stores = [open_store(store_url), open_store(store_url)]
    cid = stores[0].create(id="raced").id
    start = threading.Barrier(2)
    failures: list[BaseException] = []

    def writer(w: int) -> None:
        try:
            store = stores[w]
            bound = store.open(cid)
            start.wait(30)
            for i in range(ROUNDS):
                if i % 3 == 0:
                    store.append(cid, msgwire.user(f"w{w}-{i}", id=f"w{w}-{i}"))
                elif i % 3 == 1:
                    store.append(cid, [msgwire.user(f"w{w}-{i}-{j}", id=f"w{w}-{i}-{j}") for j in range(3)])
                else:
                    bound.sync()
                    bound.add(msgwire.user(f"w{w}-{i}", id=f"w{w}-{i}"))
        except BaseException as exc:  # reported below
            failures.append(exc)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert failures == []
    ids = [
        f"w{w}-{i}-{j}" if i % 3 == 1 else f"w{w}-{i}"
        for w in range(2)
        for i in range(ROUNDS)
        for j in range(3 if i % 3 == 1 else 1)
    ]
    _check(stores[0], cid, ids)
    for store in stores:
        store.close()


def test_a_head_remembered_from_a_replaced_conversation_is_refused(store_url: str) -> None:
    """Store A remembers a head at seq 2; store B deletes the conversation and makes it again
    with one message. A's next append is refused by the head's check and goes after B's
    message (without the check it would be written at seq 3, after a gap)."""
    a, b = open_store(store_url), open_store(store_url)
    a.create(id="x")
    a.append("x", [msgwire.user(f"a{i}", id=f"a{i}") for i in range(3)])
    b.delete("x")
    b.create(id="x")
    b.append("x", msgwire.user("b0", id="b0"))
    entry = a.append("x", msgwire.user("a3", id="a3"))[0]
    assert entry.seq == 1
    _check(a, "x", ["b0", "a3"])
    a.close()
    b.close()


def test_a_header_change_is_checked_against_the_header_stored(store_url: str) -> None:
    """A trail of before the header chain (its header is not hashed): store A imports it,
    store B replaces it with the same entries under another mode table (the same head seq and
    hash). A mode change appended through A takes its system prompt from the stored mode table
    (B's), not from the one A remembered: the header's fields are checked too."""
    export = json.loads((FIXTURES / "audit-v1.json").read_text())
    a, b = open_store(store_url), open_store(store_url)
    a.import_audit(json.dumps(export).encode())
    export["modes"] = {"plan": "Plan, as B says.", "act": "Act, as B says."}
    b.delete(export["conversation_id"])
    b.import_audit(json.dumps(export).encode())
    assert a.info(export["conversation_id"]).head == b.info(export["conversation_id"]).head
    change = msgwire.system_control("mode_change", old="act", new="plan")
    a.append(export["conversation_id"], change, decision="mode_change")
    assert a.info(export["conversation_id"]).system_prompt == "Plan, as B says."
    assert a.load(export["conversation_id"]).verify(head=a.info(export["conversation_id"]).head)
    a.close()
    b.close()


@pytest.fixture
def relay(pgserver: PostgresServer) -> Iterator[RoundTrips]:
    with RoundTrips(pgserver) as relay:
        yield relay


def test_an_append_whose_commit_reply_was_lost_is_found_stored_not_written_twice(relay: RoundTrips) -> None:
    """The server commits an assumed-head append; its reply never reaches the store (the
    connection is cut). The store, reconnected, finds the append stored and returns its
    entries: a bound conversation's add (found among the entries after its last one) and a
    message without an id (its row is keyed by its entry id) are each stored once, the
    conversation in memory as stored."""
    store = open_store(relay.schema_url())
    bound = store.create(id="lost")
    bound.add(msgwire.user("first", id="u0"))
    relay.lose_commit_reply()
    entry = bound.add(msgwire.user("second", id="u1"))
    assert relay.lost_replies == 1
    relay.lose_commit_reply()
    anonymous = loads(b'{"type":"vendor_note","note":"no id"}', type=Message)
    assert isinstance(anonymous, UnknownMessage)
    assert message_key(anonymous) is None
    [note] = store.append("lost", anonymous)
    assert relay.lost_replies == 2
    stored = store.load("lost")
    assert [e.id for e in stored.entries] == [e.id for e in bound.entries] + [note.id]
    assert [(e.id, e.hash) for e in stored.entries[1:]] == [(entry.id, entry.hash), (note.id, note.hash)]
    _check(store, "lost", ["u0", "u1", note.id])
    store.close()


def test_an_append_of_a_new_message_to_a_bound_conversation_is_one_round_trip(relay: RoundTrips) -> None:
    """Counted at the socket (``RoundTrips``): the assumed head's transaction (BEGIN, the
    head's UPDATE, the INSERTs, COMMIT) leaves in one flight, for a bound conversation's add
    and for ``append`` of one message or a batch. When another store moved the head, the same
    add takes more (the refusal, then the careful way), and is still kept."""
    url = relay.schema_url()
    store = open_store(url)
    bound = store.create(id="trips")
    for add in (
        lambda: bound.add(msgwire.user("one")),
        lambda: store.append("trips", msgwire.user("two")),
        lambda: store.append("trips", [msgwire.user(f"batch {i}") for i in range(5)]),
    ):
        before = relay.flights
        add()
        assert relay.flights - before == 1
    bound.sync()  # the appends since (a round trip of its own)
    before = relay.flights
    bound.add(msgwire.user("after the batch"))
    assert relay.flights - before == 1
    other = open_store(url)
    other.append("trips", msgwire.user("from elsewhere"))
    before = relay.flights
    bound.add(msgwire.user("after it"))
    assert relay.flights - before > 1
    assert store.load("trips").verify(head=store.info("trips").head)
    other.close()
    store.close()


def test_a_store_remembers_a_bounded_number_of_heads(tmp_path: Path) -> None:
    """The heads are a hint kept for the most recently made conversations, at most
    ``_HEADS_KEPT`` of them: a store writing to ever more conversations does not grow without
    bound, and a conversation whose head was forgotten still appends (the careful way)."""
    store = open_store(tmp_path / "many.db")
    first = store.create().id
    for _ in range(_HEADS_KEPT):
        store.create()
    assert len(store._heads) == _HEADS_KEPT
    assert first not in store._heads
    store.append(first, msgwire.user("still", id="still"))
    _check(store, first, ["still"])
    store.close()


def test_a_post_whose_commit_reply_was_lost_is_found_stored_not_posted_twice(relay: RoundTrips) -> None:
    """The server commits a post (a direct message, then a broadcast); its reply never reaches
    the store (the connection is cut). The store, reconnected, finds the mail stored (by its
    message's id) and returns it, with its seq: each is in the mail table once, and the agent
    takes each once. Before: the post was sent again and the agent got the message twice."""
    store = open_store(relay.schema_url())
    store.register_agent("scout", store.create(agent="scout").id)
    relay.lose_commit_reply()
    direct = store.post("look at the logs", to="scout", sender="lead")
    assert relay.lost_replies == 1
    relay.lose_commit_reply()
    broadcast = store.broadcast("the mission")
    assert relay.lost_replies == 2
    taken = store.mail("scout")
    assert [(m.seq, m.message.text) for m in taken] == [
        (direct.seq, "look at the logs"),
        (broadcast.seq, "the mission"),
    ]
    assert (taken[0].sender, taken[0].target, taken[0].kind) == ("lead", "scout", "direct")
    store.close()
