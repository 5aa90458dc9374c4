"""The swarm's tables: agents (idle or running, the encouragement counter, the mail taken) and
mail (broadcasts and direct messages), beside the conversations (``trail.py``), so that a post
and its recipients' counters share one transaction, and so do a delivery and its append.

A post is stored once, in ``msgwire_mail``; in the same transaction its recipients' counters go
back to 0 and idle ones are set running. Each agent takes its mail into its own conversation
at the start of its next step (``deliver``: an append, idempotent on the message id, and the
agent's ``mail_seen`` mark, in one transaction), so nothing is ever injected in the middle of a
step (between a tool call and its result). Posts take turns (a lock), so seq order is commit
order and a mark never passes a mail still being written.

Mail ends three ways, after which it is as if it had never been posted (not delivered, no
agent's mission, no reason for an agent to stay running): it expires (``expires=``; each post
deletes the expired mail), it is cleared (``clear_mail``), or it is deleted with its agent's
conversation (``delete_agents``, called by ``ConversationTables.delete``: the mail only that
agent could read, the direct messages it sent, and with the last agent every mail). Its seq is
never given again (an agent's ``mail_seen`` is one): see ``schema.py``, version 5.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal

import msgspec

from msgwire import TextBlock, UserMessage, loads
from msgwire.types import new_id, now

from ..audit import Committed, Draft, Entry
from .base import Cursor
from .trail import TrailTables

__all__ = ["AgentState", "AgentView", "Mail", "SwarmTables", "delete_agents"]

_AGENT = "SELECT name, conversation_id, state, encouragement, mail_seen, updated_at FROM msgwire_agents"
_MAIL = "SELECT seq, kind, sender, target, created_at, data_json, expires_at FROM msgwire_mail"
_LIVE = "(expires_at IS NULL OR expires_at > ?)"  # not expired at the time given
_LIVE_M = "(m.expires_at IS NULL OR m.expires_at > ?)"  # the same, of mail aliased m


class AgentState(msgspec.Struct, frozen=True, kw_only=True):
    """An agent of a swarm as the store keeps it: its conversation, ``idle`` or ``running``,
    its encouragement counter, and how much mail it has taken (``mail_seen``)."""

    name: str
    conversation_id: str
    state: Literal["idle", "running"]
    encouragement: int
    mail_seen: int
    updated_at: dt.datetime


class Mail(msgspec.Struct, frozen=True, kw_only=True):
    """A broadcast (``target`` None: every agent) or a direct message, as stored; after
    ``expires_at`` (``None``: never) it is as if it had never been posted."""

    seq: int
    kind: Literal["broadcast", "direct"]
    sender: str | None
    target: str | None
    created_at: dt.datetime
    message: UserMessage
    expires_at: dt.datetime | None = None


class AgentView(msgspec.Struct, frozen=True, kw_only=True):
    """What an agent's step starts from, read in one transaction (``view``, and at the end of
    every ``commit_step``): its state and counter, the mail waiting for it (live, in seq order:
    what ``deliver`` would take) and the mark that taking it sets (``mail_upto``, past expired
    mail too), its mission (``latest_broadcast``), the last mail seq of all (``mail_top``: what
    an idle agent waits above) and its conversation's stored head (``head_seq``).

    ``state`` is ``"running"`` while mail waits for it, whatever its row says: a post sets its
    recipients running, and an agent that went idle as the post committed (the two raced for
    its row) must still take it."""

    name: str
    state: Literal["idle", "running"]
    encouragement: int
    mail_seen: int
    mail: list[Mail]
    mail_upto: int
    mission: UserMessage | None
    mail_top: int
    head_seq: int


class SwarmTables(TrailTables):
    """A swarm's agents and mail in SQL (the ``SwarmStore`` calls; see ``msgwire.harness.store``)."""

    def __init__(self) -> None:
        super().__init__()
        self._mail_cond = threading.Condition()
        self._mail_known = 0  # the highest mail seq this process has seen posted (here or, told, elsewhere)
        self._mail_wakes = 0  # how many times wake_waiters was called

    @functools.cached_property
    def _insert_mail(self) -> str:
        """A mail's ``INSERT ... SELECT`` (which a condition may follow), its parameters typed as
        their columns (a ``SELECT`` list's untyped parameter would be text, and NULL too)."""
        key, time = self.types.key, self.types.time
        return (
            "INSERT INTO msgwire_mail (kind, sender, target, created_at, message_id, data_json, expires_at) "
            f"SELECT CAST(? AS TEXT), CAST(? AS {key}), CAST(? AS {key}), CAST(? AS {time}), CAST(? AS {key}), "
            f"CAST(? AS TEXT), CAST(? AS {time})"
        )

    def _lock_mail(self, cur: Cursor) -> None:
        """Make mail posts take turns, so that seq order is commit order and an agent's
        ``mail_seen`` mark never passes a mail still being posted (SQLite: they already do)."""

    def _notify(self, cur: Cursor) -> None:
        """Tell other processes that mail arrived, up to the last seq (posts take turns: the
        post's own) (PostgreSQL: NOTIFY)."""

    def _wait_remote(self, after: int, timeout: float, wakes: int) -> None:
        """Wait until mail above ``after`` may have arrived from another process (or
        ``wake_waiters`` was called since it was called ``wakes`` times)."""
        raise NotImplementedError

    def _mail_arrived(self, seq: int) -> None:
        """Mail up to ``seq`` exists: wake every thread of this process waiting for mail."""
        with self._mail_cond:
            self._mail_known = max(self._mail_known, seq)
            self._mail_cond.notify_all()

    # --- swarm: agents and mail ---------------------------------------------------------------

    def register_agent(
        self, name: str, conversation_id: str, *, state: Literal["idle", "running"] = "idle"
    ) -> AgentState:
        """Record an agent of a swarm and its conversation (kept as it is when already
        registered). It takes mail posted from now on; older broadcasts reach it through
        ``latest_broadcast``'s fallback."""
        key = self._key(name)

        def work(cur: Cursor) -> None:
            if cur.one("SELECT 1 FROM msgwire_agents WHERE name = ?", (key,)) is not None:
                return
            top = cur.one("SELECT max(seq) FROM msgwire_mail")
            start = top[0] if top and top[0] is not None else 0
            cur.run(
                "INSERT INTO msgwire_agents (name, conversation_id, state, encouragement, mail_from, mail_seen, "
                "updated_at) VALUES (?, ?, ?, 0, ?, ?, ?)",
                (key, self._key(conversation_id), state, start, start, self._time(now())),
            )

        self._run(work)
        return self.agent(name)

    def agent(self, name: str) -> AgentState:
        """One agent's state (``KeyError`` if not registered)."""
        row = self._run(lambda cur: cur.one(_AGENT + " WHERE name = ?", (self._key(name),)), read_only=True)
        if row is None:
            raise KeyError(f"no agent {name!r} in {self.url}")
        return self._agent(row)

    def agents(self) -> list[AgentState]:
        rows = self._run(lambda cur: cur.rows(_AGENT + " ORDER BY name"), read_only=True)
        return [self._agent(r) for r in rows]

    def set_agent(
        self, name: str, *, state: Literal["idle", "running"] | None = None, encouragement: int | None = None
    ) -> None:
        """Change an agent's state or counter (``KeyError`` if it is not registered)."""
        sets, params = ["updated_at = ?"], [self._time(now())]
        if state is not None:
            sets.append("state = ?")
            params.append(state)
        if encouragement is not None:
            sets.append("encouragement = ?")
            params.append(encouragement)
        changed = self._run(
            lambda cur: cur.run(
                f"UPDATE msgwire_agents SET {', '.join(sets)} WHERE name = ?", (*params, self._key(name))
            )
        )
        if not changed:
            raise KeyError(f"no agent {name!r} in {self.url}")

    def idle_unless_mail(self, name: str) -> bool:
        """Set an agent idle unless mail is waiting for it (then it stays running: a post that
        raced with its last step is never lost); whether it went idle."""
        return self.record_step(name, idle=True)

    def record_step(self, name: str, *, encouragement: int | None = None, idle: bool = False) -> bool:
        """After an agent's step, in one transaction: its counter becomes ``encouragement`` and,
        with ``idle``, it goes idle, unless mail is waiting for it (a post that came during the
        step reset its counter and started it: that wins); whether it was written. Mail that
        is waiting is exactly what ``deliver`` would take (expired mail is not), so an agent
        held running by it takes it at its next step, and its counter then starts again."""
        key = self._key(name)
        return self._run(lambda cur: self._record_step(cur, key, encouragement, idle)) > 0

    def _lock_agent(self, cur: Cursor, key: Any) -> None:
        """Lock an agent's row before a write that looks at its mail (PostgreSQL). Without it,
        an ``UPDATE`` that waited for a post's lock on the row reads the mail table as it was
        before that post (READ COMMITTED rechecks the row, not the subquery), and set idle an
        agent the post had just started, with the post's mail waiting; the next statement
        after the lock sees the post. (SQLite: writers take turns already.)"""
        if self._for_update:
            cur.run(f"SELECT 1 FROM msgwire_agents WHERE name = ?{self._for_update}", (key,))

    def _record_step(self, cur: Cursor, key: Any, encouragement: int | None, idle: bool) -> int:
        """``record_step``'s write in a transaction of the caller's: rows changed (0 or 1)."""
        stamp = self._time(now())
        sets, params = ["updated_at = ?"], [stamp]
        if encouragement is not None:
            sets.append("encouragement = ?")
            params.append(encouragement)
        if idle:
            sets.append("state = 'idle'")
        self._lock_agent(cur, key)
        return cur.run(
            f"UPDATE msgwire_agents SET {', '.join(sets)} WHERE name = ? AND NOT EXISTS "
            "(SELECT 1 FROM msgwire_mail m WHERE m.seq > msgwire_agents.mail_seen "
            f"AND (m.target IS NULL OR m.target = msgwire_agents.name) AND {_LIVE_M})",
            (*params, key, stamp),
        )

    def post(
        self,
        message: str | UserMessage,
        *,
        to: str | None = None,
        sender: str | None = None,
        expires: float | dt.timedelta | dt.datetime | None = None,
    ) -> Mail:
        """A direct message to agent ``to`` (``to=None``: a broadcast to every agent): stored
        (``source`` "direct" / "broadcast"), its recipients' counters reset to 0 and idle ones
        set running, in one transaction; then they are woken (PostgreSQL NOTIFY; SQLite agents in
        other processes poll). Agents take it into their conversation at their next step
        (``deliver``), never in the middle of one. ``expires``: seconds (or a ``timedelta``) from
        now, or an aware ``datetime``, after which it is as if it had never been posted (as a
        job queue's message time-to-live); ``None``: it stays until cleared or deleted."""
        if to is None:
            return self.broadcast(message, sender=sender, expires=expires)
        return self._post("direct", message, [to], sender, expires)

    def broadcast(
        self,
        message: str | UserMessage,
        *,
        to: Sequence[str] | None = None,
        sender: str | None = None,
        expires: float | dt.timedelta | dt.datetime | None = None,
    ) -> Mail:
        """A broadcast to every agent (``to=None``, the swarm's mission: agents added later
        inherit it) or to a group of agents (theirs only); ``expires`` as ``post`` says (a
        mission that ends: its agents then idle after the encouragement rule)."""
        return self._post("broadcast", message, None if to is None else list(to), sender, expires)

    def clear_mail(self, *, to: str | None = None, older_than: float | dt.timedelta | None = None) -> int:
        """Delete mail, as a job queue's purge: all of it; with ``to``, the mail addressed to
        that agent alone (its direct messages and its rows of group broadcasts; a broadcast to
        everyone is not one agent's); with ``older_than``, the mail posted that long ago or
        earlier (seconds or a ``timedelta``); both: both conditions. Returns how many mails
        (a group broadcast is one per member). What agents already took stays in their
        conversations; an agent whose mission is cleared idles after the encouragement rule."""
        conditions: list[str] = []
        params: list[Any] = []
        if older_than is not None:
            conditions.append("created_at <= ?")
            params.append(self._time(now() - dt.timedelta(seconds=_seconds(older_than, "older_than"))))
        key = None if to is None else self._key(to)
        if key is not None:
            conditions.append("target = ?")
            params.append(key)
        where = f" WHERE {' AND '.join(conditions)}" if conditions else ""

        def work(cur: Cursor) -> int:
            if key is not None and cur.one("SELECT 1 FROM msgwire_agents WHERE name = ?", (key,)) is None:
                raise KeyError(f"no agent {to!r} in {self.url}")
            return cur.run(f"DELETE FROM msgwire_mail{where}", params)

        return self._run(work)

    def _post(
        self,
        kind: Literal["broadcast", "direct"],
        message: str | UserMessage,
        targets: list[str] | None,
        sender: str | None,
        expires: float | dt.timedelta | dt.datetime | None,
    ) -> Mail:
        stamp = now()
        expires_at = _expiry(expires, stamp)
        if isinstance(message, str):
            message = UserMessage(content=[TextBlock(text=message)], source=kind)
        elif not isinstance(message, UserMessage):
            raise TypeError(f"a post is text or a UserMessage, got {type(message).__name__}")
        elif message.source != kind:
            message = msgspec.structs.replace(message, source=kind)
        data = msgspec.json.encode(message).decode()
        user = message

        keys = tuple(self._key(name) for name in targets or ())
        sent_by = None if sender is None else self._key(sender)
        values = (self._time(stamp), self._key(user.id), data, None if expires_at is None else self._time(expires_at))

        tries = 0

        def work(cur: Cursor) -> list[Callable[[], list[tuple[Any, ...]]]]:
            nonlocal tries
            tries += 1
            if len(keys) > 1:  # a group: every member known before anything is written
                for name, key in zip(targets or (), keys, strict=True):
                    if cur.one("SELECT 1 FROM msgwire_agents WHERE name = ?", (key,)) is None:
                        raise KeyError(f"no agent {name!r} in {self.url}")
            self._lock_mail(cur)
            # sent before and its connection lost: it may have been committed (looked up once this
            # post holds the mail lock, so that a try still running on the server has ended)
            if tries > 1 and (stored := self._posted(cur, values)):
                return stored
            if self._for_update and len(keys) != 1:
                # its recipients' rows in the order group commits lock agents in (no deadlock with one)
                where = " WHERE name IN " + self._in(len(keys)) if keys else ""
                cur.run(f"SELECT 1 FROM msgwire_agents{where} ORDER BY conversation_id{self._for_update}", keys)
            cur.run("DELETE FROM msgwire_mail WHERE expires_at <= ?", (self._time(stamp),))  # ended: no trace kept
            inserted = []
            for key in keys or [None]:
                # a direct message's agent is checked by its insert itself (no row: no such agent), so
                # that the post reads nothing before it writes: one round trip (PostgreSQL)
                to_agent = "" if key is None else " WHERE EXISTS (SELECT 1 FROM msgwire_agents WHERE name = ?)"
                inserted.append(
                    cur.later(
                        self._insert_mail + to_agent + " RETURNING seq",
                        (kind, sent_by, key, *values, *(() if key is None else (key,))),
                    )
                )
                where, params = ("", ()) if key is None else (" WHERE name = ?", (key,))
                cur.run(
                    f"UPDATE msgwire_agents SET state = 'running', encouragement = 0, updated_at = ?{where}",
                    (self._time(stamp), *params),
                )
            self._notify(cur)
            return inserted

        # reads nothing before writing: one round trip, and one query (PostgreSQL: a pipeline gives up
        # the GIL before each statement it sends, and a busy process's posting thread waits to get it back)
        done = self._run_once(work, one_query=True) if len(keys) <= 1 else None
        rows = [later() for later in (done if done is not None else self._run(work))]
        if not rows[-1]:  # a direct message to nobody: nothing was stored
            raise KeyError(f"no agent {(targets or ['?'])[0]!r} in {self.url}")
        seq = int(rows[-1][0][0])
        self._mail_arrived(seq)
        target = None if targets is None else ",".join(targets) if kind == "broadcast" else targets[0]
        return Mail(
            seq=seq, kind=kind, sender=sender, target=target, created_at=stamp, message=user, expires_at=expires_at
        )

    def _posted(self, cur: Cursor, values: tuple[Any, ...]) -> list[Callable[[], list[tuple[Any, ...]]]]:
        """The rows of a post already stored, by its message's id and its time (one post call's
        pair), in the shape its inserts return: a post sent again after its connection was lost
        may have been committed before, and its mail must not be stored twice."""
        created_at, message_id = values[0], values[1]
        sql = "SELECT seq FROM msgwire_mail WHERE message_id = ? AND created_at = ? ORDER BY seq"
        seqs = cur.rows(sql, (message_id, created_at))
        return [functools.partial(list, [row]) for row in seqs]

    def mail(self, name: str) -> list[Mail]:
        """The mail an agent has not taken yet (and that has not expired), in order."""
        key = self._key(name)
        rows = self._run(
            lambda cur: cur.rows(
                _MAIL + " WHERE seq > (SELECT mail_seen FROM msgwire_agents WHERE name = ?) "
                f"AND (target IS NULL OR target = ?) AND {_LIVE} ORDER BY seq",
                (key, key, self._time(now())),
            ),
            read_only=True,
        )
        return [self._mail(r) for r in rows]

    def deliver(self, name: str) -> list[Entry]:
        """Append the agent's new mail to its conversation (one transaction, idempotent on the
        message id) and mark it taken; returns the entries appended. Expired mail is passed
        (marked, not appended)."""
        key = self._key(name)

        def work(cur: Cursor) -> list[Entry]:
            agent = cur.one("SELECT conversation_id, mail_seen FROM msgwire_agents WHERE name = ?", (key,))
            if agent is None:
                raise KeyError(f"no agent {name!r} in {self.url}")
            rows = cur.rows(_MAIL + " WHERE seq > ? AND (target IS NULL OR target = ?) ORDER BY seq", (agent[1], key))
            if not rows:
                return []
            conversation_id = self._unkey(agent[0])
            stamp = now()
            mails = [m for m in map(self._mail, rows) if m.expires_at is None or m.expires_at > stamp]
            if not mails:
                cur.run("UPDATE msgwire_agents SET mail_seen = ? WHERE name = ?", (rows[-1][0], key))
                return []
            committed = self._commit(cur, conversation_id, [_mail_draft(m) for m in mails], None, fresh=True)
            cur.run("UPDATE msgwire_agents SET mail_seen = ? WHERE name = ?", (rows[-1][0], key))
            return committed.results

        return self._run(work)

    def view(self, name: str) -> AgentView:
        """What agent ``name``'s next step starts from (``AgentView``), in one read-only
        transaction (``KeyError`` if it is not registered)."""
        return self._run(lambda cur: self._view(cur, self._key(name), name), read_only=True)()

    def commit_step(
        self,
        name: str,
        conversation_id: str,
        drafts: Sequence[Draft],
        after: int | None,
        *,
        take: Sequence[Mail] = (),
        upto: int | None = None,
        encouragement: int | None = None,
        idle: bool = False,
    ) -> tuple[Committed, AgentView]:
        """An agent step's first append, with what the step took and decided, in one
        transaction: the mail ``take`` (what its model call was shown, from ``view``) appended
        to its conversation before ``drafts`` (idempotent on the message id, as ``deliver``),
        and its mark moved to ``upto`` (never back); its counter and state written as
        ``record_step`` writes them (``encouragement``, ``idle``: unless mail is waiting); then
        the view of its next step read. Returns the commit of ``drafts`` (``entries`` holds the
        mail's too: every entry above ``after``) and that view. As ``commit``, it is sent in one
        round trip after the head the store remembers (PostgreSQL)."""
        key = self._key(name)
        mail_drafts = [_mail_draft(m) for m in take]

        def then(cur: Cursor) -> Callable[[], AgentView]:
            if upto is not None:
                self._lock_agent(cur, key)
                cur.run(
                    "UPDATE msgwire_agents SET mail_seen = CASE WHEN mail_seen < ? THEN ? ELSE mail_seen END "
                    "WHERE name = ?",
                    (upto, upto, key),
                )
            if encouragement is not None or idle:
                self._record_step(cur, key, encouragement, idle)
            return self._view(cur, key, name)

        committed, view = self._append_then(conversation_id, [*mail_drafts, *drafts], after, fresh=False, then=then)
        mine = Committed(entries=committed.entries, results=committed.results[len(mail_drafts) :])
        return mine, view()

    def _view(self, cur: Cursor, key: Any, name: str) -> Callable[[], AgentView]:
        """The queries of an ``AgentView`` (through ``Cursor.later``), and what makes it of their
        rows. The mission is ``latest_broadcast``'s in one query: its own broadcast (to everyone
        or to a group naming it, since it joined) when there is one, else the latest to
        everyone, is the latest broadcast that is to everyone or to it since it joined (the
        latest to everyone, when it came after the agent joined, is one of its own)."""
        stamp = self._time(now())
        agent = cur.later(
            "SELECT a.state, a.encouragement, a.mail_seen, c.head_seq, (SELECT max(seq) FROM msgwire_mail) "
            "FROM msgwire_agents a LEFT JOIN msgwire_conversations c ON c.id = a.conversation_id WHERE a.name = ?",
            (key,),
        )
        waiting = cur.later(
            _MAIL + " WHERE seq > (SELECT mail_seen FROM msgwire_agents WHERE name = ?) "
            "AND (target IS NULL OR target = ?) ORDER BY seq",
            (key, key),
        )
        mission = cur.later(
            "SELECT data_json FROM msgwire_mail WHERE kind = 'broadcast' AND (target IS NULL OR "
            "(target = ? AND seq > (SELECT mail_from FROM msgwire_agents WHERE name = ?))) "
            f"AND {_LIVE} ORDER BY seq DESC LIMIT 1",
            (key, key, stamp),
        )

        def make() -> AgentView:
            rows = agent()
            if not rows:
                raise KeyError(f"no agent {name!r} in {self.url}")
            state, encouragement, seen, head, top = rows[0]
            found = waiting()
            live = [m for m in map(self._mail, found) if m.expires_at is None or m.expires_at > now()]
            missions = mission()
            return AgentView(
                name=name,
                state="running" if live else state,
                encouragement=encouragement,
                mail_seen=seen,
                mail=live,
                mail_upto=found[-1][0] if found else seen,
                mission=loads(missions[0][0], type=UserMessage) if missions else None,
                mail_top=int(top) if top is not None else 0,
                head_seq=head if head is not None else -1,
            )

        return make

    def latest_broadcast(self, name: str | None = None) -> UserMessage | None:
        """The mission of agent ``name``: the most recent broadcast it received (to everyone
        or to a group naming it, since it joined; even long out of its context window), else
        the most recent broadcast to everyone (so an agent added after it inherits it);
        ``None`` when there is none. Only live mail counts: not expired, cleared or deleted."""
        key = None if name is None else self._key(name)
        stamp = self._time(now())

        def work(cur: Cursor) -> tuple[Any, ...] | None:
            if key is not None:
                agent = cur.one("SELECT mail_from FROM msgwire_agents WHERE name = ?", (key,))
                if agent is not None:
                    own = cur.one(
                        "SELECT data_json FROM msgwire_mail WHERE kind = 'broadcast' AND seq > ? "
                        f"AND (target IS NULL OR target = ?) AND {_LIVE} ORDER BY seq DESC LIMIT 1",
                        (agent[0], key, stamp),
                    )
                    if own is not None:
                        return own
            return cur.one(
                f"SELECT data_json FROM msgwire_mail WHERE kind = 'broadcast' AND target IS NULL AND {_LIVE} "
                "ORDER BY seq DESC LIMIT 1",
                (stamp,),
            )

        row = self._run(work, read_only=True)
        return None if row is None else loads(row[0], type=UserMessage)

    def mail_seq(self) -> int:
        """The highest seq of the mail there is (0 when none): the last mail posted, unless mail
        was deleted since (a new post still gets a seq above every one given before)."""
        row = self._run(lambda cur: cur.one("SELECT max(seq) FROM msgwire_mail"), read_only=True)
        return int(row[0]) if row and row[0] is not None else 0

    def wait_mail(self, after: int, timeout: float) -> int:
        """Wait up to ``timeout`` seconds for mail above seq ``after`` (posted by this store
        object, or by any process); returns the last mail seq. Every thread waiting wakes at
        once (PostgreSQL: on the NOTIFY, through one LISTEN connection per store; SQLite: on a
        post of this process, else at its next look at the table); ``wake_waiters`` ends the
        wait early."""
        deadline = time.monotonic() + timeout
        with self._mail_cond:
            wakes = self._mail_wakes
            # What this process already saw posted is no news: once the newest mail is deleted
            # (cleared, expired, with its agent) the table's top may lie below it, and waiting
            # for mail "above after" would then end at once, in a loop until the timeout.
            known = max(after, self._mail_known)
        while True:
            current = self.mail_seq()
            left = deadline - time.monotonic()
            if current > after or left <= 0 or self._mail_wakes != wakes:
                return current
            self._wait_remote(known, left, wakes)
            with self._mail_cond:
                known = max(known, self._mail_known)

    def wake_waiters(self) -> None:
        """End every ``wait_mail`` of this process now (each returns the last seq, as at its
        timeout): ``Swarm.stop`` does, so that no agent sleeps out its poll."""
        with self._mail_cond:
            self._mail_wakes += 1
            self._mail_cond.notify_all()

    def _wait_local(self, after: int, timeout: float, wakes: int) -> bool:
        """Wait until this process has seen mail above ``after``, or ``wake_waiters`` was
        called since it was called ``wakes`` times (whether either happened)."""
        with self._mail_cond:
            return self._mail_cond.wait_for(lambda: self._mail_known > after or self._mail_wakes != wakes, timeout)

    def _agent(self, row: tuple[Any, ...]) -> AgentState:
        return AgentState(
            name=self._unkey(row[0]),
            conversation_id=self._unkey(row[1]),
            state=row[2],
            encouragement=row[3],
            mail_seen=row[4],
            updated_at=self._untime(row[5]),
        )

    def _mail(self, row: tuple[Any, ...]) -> Mail:
        return Mail(
            seq=row[0],
            kind=row[1],
            sender=None if row[2] is None else self._unkey(row[2]),
            target=None if row[3] is None else self._unkey(row[3]),
            created_at=self._untime(row[4]),
            message=loads(row[5], type=UserMessage),
            expires_at=None if row[6] is None else self._untime(row[6]),
        )


def _mail_draft(mail: Mail) -> Draft:
    """The draft of a mail taken into its agent's conversation: its message, decision
    ``user_input``, the audit naming the kind of mail and its sender."""
    audit = {"mail": mail.kind, **({"sender": mail.sender} if mail.sender is not None else {})}
    return Draft(id=new_id(), timestamp=now(), message=mail.message, decision="user_input", audit=audit)


def delete_agents(cur: Cursor, conversation_id: Any) -> None:
    """In the transaction deleting conversation ``conversation_id`` (its key): the agents whose
    conversation it is, and their mail: what is addressed to them (nobody else could read it)
    and the direct messages they sent; the broadcasts they sent stay (their recipients'
    missions). With the last agent, every mail goes: a broadcast to everyone is the swarm's, and
    no swarm is left for it (a new agent would inherit the mission of a swarm that is gone)."""
    names = [
        row[0] for row in cur.rows("SELECT name FROM msgwire_agents WHERE conversation_id = ?", (conversation_id,))
    ]
    if not names:
        return
    for name in names:
        cur.run("DELETE FROM msgwire_mail WHERE target = ? OR (kind = 'direct' AND sender = ?)", (name, name))
    cur.run("DELETE FROM msgwire_agents WHERE conversation_id = ?", (conversation_id,))
    if cur.one("SELECT 1 FROM msgwire_agents LIMIT 1") is None:
        cur.run("DELETE FROM msgwire_mail")


def _seconds(value: float | dt.timedelta, name: str) -> float:
    """A duration argument as seconds, at least 0 (``TypeError`` / ``ValueError`` naming it)."""
    if isinstance(value, dt.timedelta):
        seconds = value.total_seconds()
    elif isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
    else:
        raise TypeError(f"{name} is seconds (a number) or a timedelta, got {type(value).__name__}")
    if not (math.isfinite(seconds) and seconds >= 0):
        raise ValueError(f"{name} must be seconds at least 0, got {value!r}")
    return seconds


def _expiry(expires: float | dt.timedelta | dt.datetime | None, stamp: dt.datetime) -> dt.datetime | None:
    """When a mail posted at ``stamp`` expires (UTC), from ``expires``: ``None``, seconds or a
    ``timedelta`` from ``stamp``, or an aware ``datetime``; it must come after ``stamp``."""
    if expires is None:
        return None
    if isinstance(expires, dt.datetime):
        if expires.tzinfo is None or expires.utcoffset() is None:
            raise ValueError(f"expires must be a timezone-aware datetime (which zone is {expires}?)")
        at = expires.astimezone(dt.UTC)
    else:
        at = stamp + dt.timedelta(seconds=_seconds(expires, "expires"))
    if at <= stamp:
        raise ValueError(f"expires must be in the future (a mail nobody could take), got {expires!r}")
    return at
