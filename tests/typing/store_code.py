"""Store code as a user writes it: it must type-check under mypy --strict with no error (run by
tests/test_typing.py). A store is known by its protocol, ``Store``: what ``open_store`` returns
and what ``AsyncStore`` wraps, whichever backend is underneath."""

from __future__ import annotations

import msgwire
from msgwire.harness.store import AsyncStore, Store, SwarmStore, aopen_store, open_store


def opened(url: str) -> Store:
    store = open_store(url)
    swarm: SwarmStore = store  # a swarm needs only its part
    print(swarm.url)
    return store


async def in_threads(store: Store) -> int:
    async with AsyncStore(store, threads=4) as astore:
        conversation = await astore.create(agent="writer")
        await astore.append(conversation.id, msgwire.user("hi"))
        underneath: Store = astore.store
        return await astore.run(lambda s: len(s.messages(conversation.id))) + len(underneath.url)


async def from_url(url: str) -> list[msgwire.Message]:
    astore = await aopen_store(url)
    try:
        return await astore.messages("c1", last=10)
    finally:
        await astore.aclose()
