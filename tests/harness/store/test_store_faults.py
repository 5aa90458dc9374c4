"""PostgreSQL at its edges, on a server of this module's own that the tests stop and restart
(``own_pgserver``): a store that cannot connect fails fast with the server's words and writes
nothing to stderr; a server gone mid-run fails a call within ``connect_timeout`` and the store
recovers when it returns; a restart under writers loses and doubles nothing; every thread
waiting for mail wakes at once on one NOTIFY, from another process too, and again after a
restart (the listener reconnects). The swarm under the same faults: ``tests/harness/test_swarm_faults.py``.

Times asserted here are the behaviour itself (fails within ``connect_timeout``; wakes long
before the poll would have), with margins a loaded 2-core machine keeps; the latencies
themselves are measured by ``benches/wake.py``.
"""

from __future__ import annotations

import multiprocessing
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import msgwire
from msgwire.errors import StoreError, StoreUnavailableError
from msgwire.harness.store import SQLStore, open_store
from msgwire.harness.store.pool import Pool
from tests._support.postgres import PASSWORD, PASSWORD_ROLE, PostgresServer
from tests._support.scale import scaled
from tests._support.stores import post_worker, wait_until_inside

SLACK = 5.0  # seconds a loaded machine may add to a deadline
PACKAGE_ROOT = str(Path(msgwire.__file__).resolve().parents[1])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def _stopped(server: PostgresServer) -> Iterator[None]:
    """The server down for the block, and up again after it, whatever happens inside."""
    server.stop()
    try:
        yield
    finally:
        server.start()


# --- a store that cannot connect --------------------------------------------------------------------

UNREACHABLE: dict[str, Callable[[PostgresServer, Path], str]] = {
    "nothing listening": lambda server, tmp: f"postgresql://msgwire@127.0.0.1:{_free_port()}/agents",
    "no server on the socket": lambda server, tmp: f"postgresql://postgres@/postgres?host={tmp}&port=5432",
}
REFUSED: dict[str, tuple[Callable[[PostgresServer], str], str]] = {
    "a database that does not exist": (lambda s: s.url("no_such_db"), 'database "no_such_db" does not exist'),
    "a wrong password": (
        lambda s: s.url(user=PASSWORD_ROLE, password="wrong"),
        f'password authentication failed for user "{PASSWORD_ROLE}"',
    ),
    "a bad option": (
        lambda s: s.url(options="-c no_such_setting=1"),
        'unrecognized configuration parameter "no_such_setting"',
    ),
    "a bad connection string": (lambda s: "postgresql://x@/db?no_such_parameter=1", "no_such_parameter"),
}


@pytest.mark.parametrize("case", list(UNREACHABLE))
def test_no_server_fails_within_connect_timeout_naming_the_cause(
    own_pgserver: PostgresServer, tmp_path: Path, case: str
) -> None:
    url = UNREACHABLE[case](own_pgserver, tmp_path)
    started = time.monotonic()
    with pytest.raises(StoreUnavailableError) as failed:
        open_store(url, connect_timeout=2)
    assert time.monotonic() - started < 2 + SLACK  # not 271 s of a pool timeout retried nine times
    words = "connection refused" if case == "nothing listening" else "no such file or directory"
    assert words in str(failed.value).lower()
    assert "no server for 2 s" in str(failed.value)


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_refusal_another_try_would_not_change_is_raised_at_once(own_pgserver: PostgresServer, case: str) -> None:
    make_url, words = REFUSED[case]
    started = time.monotonic()
    with pytest.raises(StoreError) as failed:
        open_store(make_url(own_pgserver), connect_timeout=60)
    assert time.monotonic() - started < SLACK  # never retried for the minute it was given
    assert not isinstance(failed.value, StoreUnavailableError)
    assert words in str(failed.value)


def test_the_password_role_opens_with_its_password(own_pgserver: PostgresServer) -> None:
    """The counterpart of the wrong password above: the role and its scram line work."""
    with open_store(own_pgserver.url(user=PASSWORD_ROLE, password=PASSWORD)) as store:
        assert store.create().id


def test_failing_to_connect_writes_nothing_to_stderr(own_pgserver: PostgresServer) -> None:
    """In a process that configured no logging, where a library's warning goes to stderr
    (logging's last resort): psycopg_pool printed every failed attempt there."""
    script = (
        "import sys\n"
        "from msgwire.harness.store import open_store\n"
        "for url in sys.argv[1:]:\n"
        "    try:\n"
        "        open_store(url, connect_timeout=2)\n"
        "    except Exception as exc:\n"
        "        print(type(exc).__name__)\n"
    )
    urls = [f"postgresql://msgwire@127.0.0.1:{_free_port()}/agents", own_pgserver.url("no_such_db")]
    done = subprocess.run(
        [sys.executable, "-c", script, *urls],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": PACKAGE_ROOT},
    )
    assert done.stdout.split() == ["StoreUnavailableError", "StoreError"]
    assert done.stderr == ""


def test_a_store_opened_while_the_server_starts_waits_for_it(own_pgserver: PostgresServer) -> None:
    url = own_pgserver.schema_url()
    opened: list[SQLStore | BaseException] = []
    with _stopped(own_pgserver):
        opener = threading.Thread(target=lambda: opened.append(_open_or_error(url, 60)))
        opener.start()
        opener.join(1.0)
        assert opener.is_alive(), f"gave up on a server that is down for now: {opened}"
    opener.join(120)
    store = opened[0]
    assert isinstance(store, SQLStore), store
    store.close()


def _open_or_error(url: str, connect_timeout: float) -> SQLStore | BaseException:
    try:
        return open_store(url, connect_timeout=connect_timeout)
    except BaseException as exc:  # handed to the test thread, which fails with it
        return exc


# --- a server gone mid-run --------------------------------------------------------------------------


def test_a_server_gone_mid_run_fails_a_call_within_connect_timeout_and_the_store_recovers(
    own_pgserver: PostgresServer,
) -> None:
    with open_store(own_pgserver.schema_url(), connect_timeout=2) as store:
        conversation = store.create()
        conversation.add(msgwire.user("before"))
        with _stopped(own_pgserver):
            started = time.monotonic()
            with pytest.raises(StoreUnavailableError) as failed:
                conversation.add(msgwire.user("during"))
            assert time.monotonic() - started < 2 + SLACK
            assert "no such file or directory" in str(failed.value).lower()  # the socket is gone
            assert store.url in str(failed.value)
        conversation.add(msgwire.user("after"))  # the first call after the server returns reconnects
        assert [m.text for m in store.messages(conversation.id)] == ["before", "after"]  # type: ignore[union-attr]
        assert [m.text for m in conversation.messages()] == ["before", "after"]  # type: ignore[union-attr]  # not kept
        assert conversation.verify()


def test_restarts_under_writers_lose_nothing_and_double_nothing(own_pgserver: PostgresServer) -> None:
    """Four threads append batches of 3 while the server restarts (``scaled``: 1, deep 5 times).
    A restart shorter than ``connect_timeout`` reaches no caller, but for a commit whose reply
    was lost: that one says the batch may be stored, and sending it again (as the contract
    says is safe) must neither lose nor double it."""
    restarts = scaled(1, 5)
    with open_store(own_pgserver.schema_url(), connect_timeout=60) as store:
        conversation_id = store.create().id
        stop = threading.Event()
        sent: list[str] = []
        unsure: list[str] = []
        errors: list[BaseException] = []

        def write(worker: int) -> None:
            i = 0
            while not stop.is_set():
                batch = [msgwire.user(f"{worker}.{i}.{j}", id=f"w{worker}-{i}-{j}") for j in range(3)]
                while True:
                    try:
                        store.append(conversation_id, batch)
                        break
                    except StoreUnavailableError as exc:
                        if "may or may not have been stored" not in str(exc):
                            errors.append(exc)
                            return
                        unsure.append(batch[0].id)
                sent.extend(m.id for m in batch)
                i += 1

        writers = [threading.Thread(target=write, args=(w,)) for w in range(4)]
        for thread in writers:
            thread.start()
        try:
            for _ in range(restarts):
                _wait_for_more(sent, 30)  # some appends before each restart
                own_pgserver.restart()
            _wait_for_more(sent, 30)  # and some after the last
        finally:
            stop.set()
            for thread in writers:
                thread.join(120)
        assert errors == []
        ids = [m.id for m in store.messages(conversation_id)]  # type: ignore[union-attr]
        assert len(ids) == len(set(ids)), "doubled"
        assert sorted(ids) == sorted(sent), "lost"
        trail = store.load(conversation_id)
        assert [e.seq for e in trail.entries] == list(range(len(sent)))
        assert trail.verify(head=store.info(conversation_id).head)


_CRASH_WRITERS = """
import sys, threading
import msgwire
from msgwire.harness.store import open_store

store = open_store(sys.argv[1], connect_timeout=60)
failures = []

def write(conversation_id):
    try:
        batch = [msgwire.user(f"{i} " + "x" * 65536, id=f"{conversation_id}-{i}") for i in range(40)]
        store.append(conversation_id, batch)
    except Exception as exc:
        failures.append(f"{type(exc).__name__}: {exc}")

threads = [threading.Thread(target=write, args=(cid,)) for cid in sys.argv[2:]]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
store.close()
print(failures)
"""


def test_a_crash_under_writers_in_the_middle_of_their_inserts_writes_nothing_to_stderr(
    own_pgserver: PostgresServer,
) -> None:
    """``kill -9`` of the postmaster while four writer threads, in a process that configured
    no logging, are each sending its batch's ``INSERT``s (psycopg's ``executemany``, which sends
    them in a pipeline of its own): the first waits on an entry another session holds
    uncommitted, so the server reads no further and the 2.6 MB batch stays half sent, where the
    crash finds every writer. Each append is run again once the server is back and stored
    once, no caller sees an error, and nothing reaches stderr. Before: psycopg logged ``error
    ignored terminating <psycopg.Pipeline [BAD]>: ...`` (logging's last resort printed it): its
    pipeline, left with the send's error, failed to close as well."""
    import psycopg

    url = own_pgserver.schema_url()
    with open_store(url) as store:
        ids = [store.create().id for _ in range(4)]
    holder = psycopg.connect(url)
    # No foreign-key check in this session (its key share lock on the conversation's row would
    # stop the writers earlier, at the append's FOR UPDATE): each writer's first entry (seq 0),
    # held uncommitted, so that its INSERT waits on it.
    holder.execute("SET session_replication_role = replica")
    for cid in ids:
        holder.execute(
            "INSERT INTO msgwire_entries (conversation_id, seq, id, message_id, decision, timestamp, body, hash, "
            "message_at, message_len) VALUES (%s, 0, 'held', 'held', 'held', now(), '', '', 0, 0)",
            (cid.encode(),),
        )
    writers = subprocess.Popen(
        [sys.executable, "-c", _CRASH_WRITERS, url, *ids],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": PACKAGE_ROOT},
    )
    try:
        _wait_until(lambda: _waiting_on_locks(own_pgserver) == len(ids))
        own_pgserver.crash()
        holder.close()
        own_pgserver.start()
        out, err = writers.communicate(timeout=120)
    finally:
        if writers.poll() is None:
            writers.kill()
            writers.wait()
    assert (out.strip(), err) == ("[]", "")
    with open_store(url) as store:
        for cid in ids:
            assert [m.id for m in store.messages(cid)] == [f"{cid}-{i}" for i in range(40)]
            assert store.load(cid).verify(head=store.info(cid).head)


def _waiting_on_locks(server: PostgresServer) -> int:
    import psycopg

    with psycopg.connect(server.conninfo, autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'").fetchone()
        return int(row[0]) if row else 0


def _wait_for_more(items: list[str], more: int, timeout: float = 120) -> None:
    """Wait until ``more`` items were added to ``items`` (by other threads)."""
    deadline, target = time.monotonic() + timeout, len(items) + more
    while len(items) < target:
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


# --- the pool -------------------------------------------------------------------------------------


@contextmanager
def _row_locked(store: SQLStore, conversation_id: str) -> Iterator[None]:
    """The conversation's row locked by another session for the block: appends to it wait."""
    import psycopg

    from msgwire.harness.store.postgres import PostgresStore

    assert isinstance(store, PostgresStore)
    with psycopg.connect(store.conninfo, application_name="msgwire_tests") as conn:
        conn.execute("SELECT 1 FROM msgwire_conversations WHERE id = %s FOR UPDATE", (conversation_id.encode(),))
        yield
        conn.rollback()


@contextmanager
def _calls_of(function: Callable[..., Any]) -> Iterator[list[float]]:
    """The calls of ``function`` this thread makes inside the block, when each began (seen by a
    profile hook: nothing is replaced)."""
    calls: list[float] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code is function.__code__:
            calls.append(time.monotonic())

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield calls
    finally:
        sys.setprofile(previous)


def _sessions(store: SQLStore, application: str) -> int:
    import psycopg

    from msgwire.harness.store.postgres import PostgresStore

    assert isinstance(store, PostgresStore)
    with psycopg.connect(store.conninfo, application_name="msgwire_tests", autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (application,))
        return int(row.fetchone()[0])  # type: ignore[index]


def test_a_pool_whose_connections_stay_in_use_says_so_after_its_timeout(own_pgserver: PostgresServer) -> None:
    """Raised once: one wait of ``timeout`` for a connection, not one per retry of the
    transaction (it was retried nine times: 271 s with psycopg_pool's 30 s)."""
    with open_store(own_pgserver.schema_url(), max_size=1, timeout=2) as store:
        conversation_id = store.create().id
        with _row_locked(store, conversation_id):
            blocked = threading.Thread(target=store.append, args=(conversation_id, msgwire.user("waits")))
            blocked.start()  # holds the one connection while it waits for the row
            blocked.join(0.5)
            started = time.monotonic()
            with (
                _calls_of(Pool.take) as takes,
                pytest.raises(StoreError, match="all 1 connections stayed in use for 2 s"),
            ):
                store.info(conversation_id)
            took = time.monotonic() - started
        assert 2 <= took < 4  # one wait of timeout; a second attempt would wait 2 s more
        assert len(takes) == 1  # one attempt at a connection
        blocked.join(60)
        assert [m.text for m in store.messages(conversation_id)] == ["waits"]  # type: ignore[union-attr]


def test_idle_connections_above_min_size_close_after_max_idle(own_pgserver: PostgresServer) -> None:
    url = own_pgserver.schema_url() + "&application_name=msgwire_idle_test"
    with open_store(url, min_size=0, max_size=4, max_idle=0.2) as store:
        conversation_id = store.create().id
        message = msgwire.user("to decide")
        store.append(conversation_id, message)
        # four updates at once, each waiting for the row on a connection of its own (appends
        # would not do: those sent meanwhile share one transaction, group.py)
        with _row_locked(store, conversation_id):
            appends = [
                threading.Thread(target=store.update, args=(conversation_id, message, f"decided {i}")) for i in range(4)
            ]
            for thread in appends:
                thread.start()
            _wait_until(lambda: _sessions(store, "msgwire_idle_test") == 4)
        for thread in appends:
            thread.join(60)
        time.sleep(0.3)  # longer than max_idle: the time that expires them, not a wait for another thread
        store.info(conversation_id)  # the next use closes the expired ones (and connects anew)
        assert _sessions(store, "msgwire_idle_test") == 1


def test_a_connection_left_mid_statement_is_not_lent_again(own_pgserver: PostgresServer) -> None:
    """An interrupt (Ctrl-C) that lands while a statement runs leaves its connection busy: the
    pool closes it rather than hand the next caller "another command is already in progress"."""
    with open_store(own_pgserver.schema_url(), max_size=1) as store:

        def interrupted(cur: Any) -> None:
            cur._raw.connection.pgconn.send_query(b"SELECT pg_sleep(0.2)")  # sent, its result unread
            raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            store._run(interrupted)
        assert store.create().id  # on a new connection


def test_a_forked_child_uses_connections_of_its_own(own_pgserver: PostgresServer) -> None:
    """A child must neither use nor close its parent's connections (one socket, two sessions'
    traffic interleaved); it connects anew, and so does its listener."""
    with open_store(own_pgserver.schema_url()) as store:
        conversation = store.create()
        conversation.add(msgwire.user("parent before"))  # a connection idle in the pool
        store.register_agent("a", conversation.id)
        store.wait_mail(store.mail_seq(), 0.01)  # the listener running
        child = multiprocessing.get_context("fork").Process(target=_in_child, args=(store, conversation.id))
        child.start()
        child.join(60)
        assert child.exitcode == 0
        store.append(conversation.id, msgwire.user("parent after"))  # the parent's connection still works
        texts = [m.text for m in store.messages(conversation.id)]  # type: ignore[union-attr]
        assert texts == ["parent before", "child", "parent after"]


def _in_child(store: SQLStore, conversation_id: str) -> None:
    store.append(conversation_id, msgwire.user("child"))
    seen = store.mail_seq()
    store.post("from the child", to="a")
    assert store.wait_mail(seen, 10) == seen + 1


def _wait_until(condition: Callable[[], bool], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


# --- waiting for mail ------------------------------------------------------------------------------


def test_one_notify_wakes_every_waiting_thread_also_after_a_restart(own_pgserver: PostgresServer) -> None:
    """Waiters (``scaled``: 4, deep 16) on one store, each for a minute; a post from another
    process wakes them all long before that. Then, with new waiters waiting, the server
    restarts and the mail is posted while the store's listener is away (the store's role may
    not log in again until it is committed: no notification can reach the store); once let in,
    the listener reads what came and wakes every waiter. Before: one NOTIFY woke one waiter, the
    others read the shared connection in turn under a lock."""
    url, role = own_pgserver.role_url()
    waiters = scaled(4, 16)
    spawn = multiprocessing.get_context("spawn")
    with open_store(url) as store:
        conversation = store.create()
        store.register_agent("target", conversation.id)
        for where in ("another process", "while the listener was away"):
            seen = store.mail_seq()
            woken: list[int] = []
            threads = [threading.Thread(target=_wait_into, args=(store, seen, woken)) for _ in range(waiters)]
            for thread in threads:
                thread.start()
            wait_until_inside(threads, "_wait_local")  # each waiting (its first look at the table made)
            if where == "another process":
                poster = spawn.Process(target=post_worker, args=(url, "target", where))
                started = time.monotonic()
                poster.start()
                poster.join(60)
            else:
                with own_pgserver.locked_out(role):
                    own_pgserver.restart()  # every session ends, the listener's too
                    admin = own_pgserver.url(options=f"-c search_path={role}")
                    poster = spawn.Process(target=post_worker, args=(admin, "target", where))
                    poster.start()
                    poster.join(60)
                    assert own_pgserver.sessions(role) == 0  # the store's listener was away for the whole post
                    assert woken == []  # so nobody could know yet
                started = time.monotonic()  # let in
            assert poster.exitcode == 0
            for thread in threads:
                thread.join(60)
            assert time.monotonic() - started < 30, f"a waiter slept through the post ({where})"
            assert woken == [seen + 1] * waiters


def test_a_post_in_another_schema_wakes_nobody_here(own_pgserver: PostgresServer) -> None:
    """NOTIFY's channel is the database's: a store in another schema hears every post there.
    It must not take that mail's seq for its own (its waiters then looked at their table in a
    loop until their timeout: thousands of queries a second)."""
    with open_store(own_pgserver.schema_url()) as here, open_store(own_pgserver.schema_url()) as there:
        for store in (here, there):
            store.register_agent("a", store.create().id)
        for _ in range(3):
            there.post("not for here", to="a")  # there's seq runs ahead of here's
        here.wait_mail(0, 0.2)  # its listener up
        looks = 0
        plain = here.mail_seq

        def counted() -> int:
            nonlocal looks
            looks += 1
            return plain()

        here.mail_seq = counted  # type: ignore[method-assign]
        returned: list[int] = []
        waiter = threading.Thread(target=lambda: returned.append(here.wait_mail(0, 2)))
        waiter.start()
        there.post("again", to="a")
        waiter.join(60)
        assert returned == [0]  # nothing here
        assert looks < 10  # a look when it starts and one when it ends (was thousands)


def _wait_into(store: SQLStore, after: int, woken: list[int]) -> None:
    woken.append(store.wait_mail(after, 60))


pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning:multiprocessing"),
    pytest.mark.filterwarnings("ignore:This process .* is multi-threaded, use of fork:DeprecationWarning"),
]
