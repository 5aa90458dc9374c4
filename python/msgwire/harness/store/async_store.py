"""``AsyncStore``: every call of a store as a coroutine, each run in a thread of the store's own
pool (sized like its connections), so the event loop never waits on the database."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

from .protocols import Store

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
    synchronous store underneath (the same calls, the same arguments): any ``Store``."""

    def __init__(self, store: Store, *, threads: int = 8) -> None:
        self.store = store
        self.url = store.url
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="msgwire-store")

    # the conversation store
    create = _InThread(Store.create)
    bind = _InThread(Store.bind)
    open = _InThread(Store.open)
    load = _InThread(Store.load)
    info = _InThread(Store.info)
    conversations = _InThread(Store.conversations)
    delete = _InThread(Store.delete)
    messages = _InThread(Store.messages)
    session = _InThread(Store.session)
    append = _InThread(Store.append)
    update = _InThread(Store.update)
    commit = _InThread(Store.commit)
    since = _InThread(Store.since)
    fork = _InThread(Store.fork)
    export_audit = _InThread(Store.export_audit)
    import_audit = _InThread(Store.import_audit)
    # the swarm's
    register_agent = _InThread(Store.register_agent)
    agent = _InThread(Store.agent)
    agents = _InThread(Store.agents)
    set_agent = _InThread(Store.set_agent)
    post = _InThread(Store.post)
    broadcast = _InThread(Store.broadcast)
    clear_mail = _InThread(Store.clear_mail)
    idle_unless_mail = _InThread(Store.idle_unless_mail)
    record_step = _InThread(Store.record_step)
    mail = _InThread(Store.mail)
    deliver = _InThread(Store.deliver)
    view = _InThread(Store.view)
    commit_step = _InThread(Store.commit_step)
    latest_broadcast = _InThread(Store.latest_broadcast)
    mail_seq = _InThread(Store.mail_seq)
    wait_mail = _InThread(Store.wait_mail)
    wake_waiters = _InThread(Store.wake_waiters)

    async def run(self, work: Callable[[Store], T], /) -> T:
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
