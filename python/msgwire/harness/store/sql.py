"""``SQLStore``: every call of a store in portable SQL, one class per backend implementing both
parts (``ConversationStore`` and ``SwarmStore``) so that a post and its recipients' counter resets,
or a delivery and its append, share one transaction.

The layers, each in its own file: ``base.py`` (transactions, the dialect hooks, retries,
migrations), ``trail.py`` (the append transaction: entries and message rows),
``reads.py`` (rows, messages, sessions), ``conversations.py`` (the conversation store's
writes: create, bind, append, fork, import), ``mailbox.py`` (the swarm's agents and mail).
``sqlite.py`` and ``postgres.py`` give connections, transactions and a few dialect words.
"""

from __future__ import annotations

from .conversations import ConversationTables
from .mailbox import SwarmTables

__all__ = ["SQLStore"]


class SQLStore(ConversationTables, SwarmTables):
    """A store over one SQL database (``SQLiteStore``, ``PostgresStore``): see
    ``msgwire.harness.store.ConversationStore`` and ``SwarmStore`` for each call."""
