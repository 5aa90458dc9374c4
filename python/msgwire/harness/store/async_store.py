"""``AsyncStore``: every call of a store as a coroutine, each run in a thread of the store's own
pool (sized like its connections), so the event loop never waits on the database."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

from .sql import SQLStore

__all__ = ["AsyncStore"]

P = ParamSpec("P")
T = TypeVar("T")


class _InThread(Generic[P, T]):
    """A store's method as a coroutine method of ``AsyncStore``, with the method's own signature
    (so a type checker sees every argument) and the store's thread pool to run it in."""

    def __init__(self, method: Callable[Concatenate[Any, P], T]) -> None:
        self.name = method.__name__
        self.__doc__ = method.__doc__

    @overload
    def __get__(self, owner: None, kind: type[AsyncStore]) -> _InThread[P, T]: ...
    @overload
    def __get__(self, owner: AsyncStore, kind: type[AsyncStore]) -> Callable[P, Awaitable[T]]: ...
    def __get__(self, owner: AsyncStore | None, kind: type[AsyncStore]) -> Any:
        if owner is None:
            return self
        call: Callable[P, T] = getattr(owner.store, self.name)
        pool = owner._pool

        async def run(*args: P.args, **kwargs: P.kwargs) -> T:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(pool, functools.partial(call, *args, **kwargs))

        run.__name__ = run.__qualname__ = self.name
        return run


class AsyncStore:
    """The calls of a store as coroutines: ``await astore.append(...)``; ``astore.store`` is the
    synchronous store underneath (the same calls, the same arguments)."""

    def __init__(self, store: SQLStore, *, threads: int = 8) -> None:
        self.store = store
        self.url = store.url
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="msgwire-store")

    # the conversation store
    create = _InThread(SQLStore.create)
    bind = _InThread(SQLStore.bind)
    open = _InThread(SQLStore.open)
    load = _InThread(SQLStore.load)
    info = _InThread(SQLStore.info)
    conversations = _InThread(SQLStore.conversations)
    delete = _InThread(SQLStore.delete)
    messages = _InThread(SQLStore.messages)
    session = _InThread(SQLStore.session)
    append = _InThread(SQLStore.append)
    update = _InThread(SQLStore.update)
    commit = _InThread(SQLStore.commit)
    since = _InThread(SQLStore.since)
    fork = _InThread(SQLStore.fork)
    export_audit = _InThread(SQLStore.export_audit)
    import_audit = _InThread(SQLStore.import_audit)
    # the swarm's
    register_agent = _InThread(SQLStore.register_agent)
    agent = _InThread(SQLStore.agent)
    agents = _InThread(SQLStore.agents)
    set_agent = _InThread(SQLStore.set_agent)
    post = _InThread(SQLStore.post)
    broadcast = _InThread(SQLStore.broadcast)
    clear_mail = _InThread(SQLStore.clear_mail)
    idle_unless_mail = _InThread(SQLStore.idle_unless_mail)
    record_step = _InThread(SQLStore.record_step)
    mail = _InThread(SQLStore.mail)
    deliver = _InThread(SQLStore.deliver)
    latest_broadcast = _InThread(SQLStore.latest_broadcast)
    mail_seq = _InThread(SQLStore.mail_seq)
    wait_mail = _InThread(SQLStore.wait_mail)
    wake_waiters = _InThread(SQLStore.wake_waiters)

    async def run(self, work: Callable[[SQLStore], T], /) -> T:
        """``work(store)`` in a thread of the store's pool: several calls of the store (and what
        comes between them) as one job, which the event loop does not wait on."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, work, self.store)

    async def aclose(self) -> None:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._pool, self.store.close)
        self._pool.shutdown(wait=False)

    async def __aenter__(self) -> AsyncStore:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
