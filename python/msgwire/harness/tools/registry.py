"""Tools: what the model is told (``msgwire.Tool``) apart from what runs (a function or an executor).

``@tool`` turns a sync or async function into a ``FunctionTool``: still callable as the function,
with ``.spec``, the ``msgwire.Tool`` (name, description, JSON Schema of the arguments) that
``msgwire.formats.to_request(..., tools=[...])`` writes for every dialect. The schema comes from
the signature and the docstring (``schema.py``). A tool can also be a ``msgwire.Tool`` plus an
executor object (``ExecutorTool``: ``execute(name, arguments)``, sync or async), e.g. the tools of
an MCP server. ``ToolRegistry`` holds them by name.

Per tool: ``policy`` (an ``ApprovalPolicy``: ``"auto"`` by default), ``timeout`` in seconds
(``None``: the runner's), ``concurrency_safe`` (``True`` by default; ``False`` makes the tool run
alone, after every call before it and before every call after it), and for a sync function
``blocking`` (``True`` by default: it runs in the runner's threads; ``False`` says it returns at
once, so it is called on the event loop without the thread hand-off, 70-100 us here, and a
timeout cannot stop it).

A function receives a ``ToolContext`` (the call, the runner's ``deps``, and a ``cancelled`` event
set on timeout or interruption, for sync tools that can stop early) when one of its parameters
is annotated ``ToolContext``; that parameter is not part of the schema.

``@tool`` and ``@registry.tool`` keep the function's signature for type checkers: a
``FunctionTool[P, R]`` is called as the function is (``ParamSpec``), and their options are
checked keyword arguments.
"""

from __future__ import annotations

import copy
import functools
import inspect
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, ParamSpec, Protocol, Self, TypedDict, TypeVar, Unpack, overload

import msgspec

from msgwire import Tool, ToolCallBlock

from .policy import ApprovalPolicy, check_policy
from .schema import ArgumentsModel, arguments_model

__all__ = [
    "BaseTool",
    "ExecutorTool",
    "FunctionTool",
    "ToolContext",
    "ToolExecutor",
    "ToolOptions",
    "ToolRegistry",
    "tool",
]

P = ParamSpec("P")
R = TypeVar("R")


class ToolContext:
    """What a tool may know about its call: ``call`` (the ``ToolCallBlock`` as approved),
    ``deps`` (the runner's), ``cancelled`` (a ``threading.Event`` set when the call timed out or
    was interrupted: a sync tool keeps running in its thread unless it checks)."""

    __slots__ = ("call", "cancelled", "deps")

    def __init__(self, call: ToolCallBlock, deps: Any) -> None:
        self.call = call
        self.deps = deps
        self.cancelled = threading.Event()


class ToolExecutor(Protocol):
    """Runs tools declared apart from it: ``execute(name, arguments)`` with the arguments
    decoded (a dict, or the tool's ``arguments_type``); sync or async (``async def execute``)."""

    def execute(self, name: str, arguments: Any, /) -> Any: ...


class BaseTool:
    """A registered tool: its ``spec`` and how it runs."""

    spec: Tool
    policy: ApprovalPolicy
    timeout: float | None
    concurrency_safe: bool
    is_async: bool
    needs_context: bool
    blocking: bool = True  # a sync tool runs in a thread unless False (see the module docs)

    def __init__(self, spec: Tool, *, policy: ApprovalPolicy, timeout: float | None, concurrency_safe: bool) -> None:
        self.spec = spec
        self.policy = check_policy(policy)
        if timeout is not None and timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
        self.timeout = timeout
        self.concurrency_safe = concurrency_safe
        self.needs_context = False

    @property
    def name(self) -> str:
        return self.spec.name

    def decode(self, arguments: str) -> Any:
        """The arguments text decoded and checked (``msgspec.ValidationError`` /
        ``msgspec.DecodeError`` with the JSON path when it does not fit)."""
        raise NotImplementedError

    def invoke(self, arguments: Any, context: ToolContext | None) -> Any:
        """Call the tool with decoded arguments: its value, or an awaitable for an async tool."""
        raise NotImplementedError

    def to_builtins(self, arguments: Any) -> Any:
        """Decoded arguments as JSON builtins (what an approver is shown, and may edit)."""
        return msgspec.to_builtins(arguments)

    def with_options(
        self,
        *,
        policy: ApprovalPolicy | None = None,
        timeout: float | None = None,
        concurrency_safe: bool | None = None,
    ) -> Self:
        """A copy with some options replaced (the original is unchanged)."""
        clone = copy.copy(self)
        if policy is not None:
            clone.policy = check_policy(policy)
        if timeout is not None:
            clone.timeout = timeout
        if concurrency_safe is not None:
            clone.concurrency_safe = concurrency_safe
        return clone

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, policy={self.policy!r}, concurrency_safe={self.concurrency_safe})"


def _text(arguments: str) -> str:
    # no arguments at all means an empty object (isspace stops at the first other character:
    # strip() would copy the whole text)
    return "{}" if not arguments or arguments.isspace() else arguments


class FunctionTool(BaseTool, Generic[P, R]):
    """A function as a tool (what ``@tool`` returns); calling it calls the function (with the
    function's signature, for type checkers too). ``describe_returns=False`` leaves the
    docstring's Returns section out of the description."""

    def __init__(
        self,
        fn: Callable[P, R],
        *,
        name: str | None = None,
        description: str | None = None,
        policy: ApprovalPolicy = "auto",
        timeout: float | None = None,
        concurrency_safe: bool = True,
        describe_returns: bool = True,
        blocking: bool = True,
    ) -> None:
        check_policy(policy)  # before the work of the schema
        name = name or fn.__name__
        self.fn = fn
        self.model: ArgumentsModel = arguments_model(fn, name, ToolContext, describe_returns=describe_returns)
        spec = Tool(
            name=name,
            description=self.model.description if description is None else description,
            parameters=self.model.schema,
        )
        super().__init__(spec, policy=policy, timeout=timeout, concurrency_safe=concurrency_safe)
        self.is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__)
        self.blocking = blocking
        self.needs_context = self.model.context_parameter is not None
        self._decode = self.model.decode
        functools.update_wrapper(self, fn)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.fn(*args, **kwargs)

    def decode(self, arguments: str) -> Any:
        return self._decode(_text(arguments))

    def to_builtins(self, arguments: Any) -> Any:
        return self.model.to_builtins(arguments)

    def invoke(self, arguments: Any, context: ToolContext | None) -> Any:
        model = self.model
        # flattened: the arguments are the lone parameter; else the Struct made of the parameters
        # (schema.py), its fields their names
        kwargs = {model.parameters[0]: arguments} if model.flatten else msgspec.structs.asdict(arguments)
        if model.context_parameter is not None:
            kwargs[model.context_parameter] = context
        fn: Callable[..., Any] = self.fn
        return fn(**kwargs)


class ExecutorTool(BaseTool):
    """A declared tool (``spec``) run by an executor object. Its arguments are decoded into
    ``arguments_type`` when given (any type msgspec decodes, e.g. a Struct), else into a JSON
    object whose ``required`` properties (from the schema) must be present."""

    def __init__(
        self,
        spec: Tool,
        executor: ToolExecutor,
        *,
        arguments_type: Any = None,
        policy: ApprovalPolicy = "auto",
        timeout: float | None = None,
        concurrency_safe: bool = True,
    ) -> None:
        super().__init__(spec, policy=policy, timeout=timeout, concurrency_safe=concurrency_safe)
        self.executor = executor
        self.is_async = inspect.iscoroutinefunction(executor.execute)
        self._decoder: msgspec.json.Decoder[Any] = msgspec.json.Decoder(
            dict[str, Any] if arguments_type is None else arguments_type
        )
        required = spec.parameters.get("required", []) if arguments_type is None else []
        self._required = tuple(r for r in required if isinstance(r, str))

    def decode(self, arguments: str) -> Any:
        value = self._decoder.decode(_text(arguments))
        for name in self._required:
            if name not in value:
                raise msgspec.ValidationError(f"Object missing required field `{name}`")
        return value

    def invoke(self, arguments: Any, context: ToolContext | None) -> Any:
        return self.executor.execute(self.name, arguments)


class ToolOptions(TypedDict, total=False):
    """The options of ``@tool(...)`` and ``@registry.tool(...)`` (``FunctionTool``'s): ``name``
    (the function's), ``description`` (from the docstring), ``policy`` (``"auto"``), ``timeout``
    (``None``: the runner's), ``concurrency_safe`` (``True``), ``describe_returns`` (``True``),
    ``blocking`` (``True``: a sync function runs in a thread; ``False``: on the event loop)."""

    name: str | None
    description: str | None
    policy: ApprovalPolicy
    timeout: float | None
    concurrency_safe: bool
    describe_returns: bool
    blocking: bool


@overload
def tool(fn: Callable[P, R], /) -> FunctionTool[P, R]: ...
@overload
def tool(**options: Unpack[ToolOptions]) -> Callable[[Callable[P, R]], FunctionTool[P, R]]: ...
def tool(
    fn: Callable[P, R] | None = None, /, **options: Unpack[ToolOptions]
) -> FunctionTool[P, R] | Callable[[Callable[P, R]], FunctionTool[P, R]]:
    """``@tool`` or ``@tool(policy="ask", timeout=30, concurrency_safe=False, ...)``: a
    ``FunctionTool`` with its ``.spec`` (``msgwire.Tool``) from the signature and docstring."""

    def make(f: Callable[P, R]) -> FunctionTool[P, R]:
        return FunctionTool(f, **options)

    return make(fn) if fn is not None else make


class ToolRegistry:
    """Tools by name. ``specs`` is what to pass to ``formats.to_request(..., tools=...)``."""

    def __init__(self, tools: Iterable[BaseTool | Callable[..., Any]] = ()) -> None:
        self._tools: dict[str, BaseTool] = {}
        for t in tools:
            self.add(t)

    def add(
        self,
        tool: BaseTool | Callable[..., Any] | Tool,
        executor: ToolExecutor | None = None,
        *,
        policy: ApprovalPolicy | None = None,
        timeout: float | None = None,
        concurrency_safe: bool | None = None,
        arguments_type: Any = None,
    ) -> BaseTool:
        """Register a tool: a ``@tool`` function (options given here override its own), a plain
        function (made a ``FunctionTool``), or a ``msgwire.Tool`` with its ``executor``.
        ``ValueError`` for a name already taken."""
        if isinstance(tool, Tool):
            if executor is None:
                raise TypeError(f"tool {tool.name!r} is a declaration: give the executor that runs it")
            made: BaseTool = ExecutorTool(
                tool,
                executor,
                arguments_type=arguments_type,
                policy=policy or "auto",
                timeout=timeout,
                concurrency_safe=True if concurrency_safe is None else concurrency_safe,
            )
        elif isinstance(tool, BaseTool):
            made = tool.with_options(policy=policy, timeout=timeout, concurrency_safe=concurrency_safe)
        elif callable(tool):
            made = FunctionTool(
                tool,
                policy=policy or "auto",
                timeout=timeout,
                concurrency_safe=True if concurrency_safe is None else concurrency_safe,
            )
        else:
            raise TypeError(f"cannot register {tool!r} as a tool")
        self._register(made)
        return made

    def _register(self, made: BaseTool) -> None:
        if made.name in self._tools:
            raise ValueError(f"a tool named {made.name!r} is already registered")
        self._tools[made.name] = made

    @overload
    def tool(self, fn: Callable[P, R], /) -> FunctionTool[P, R]: ...
    @overload
    def tool(self, **options: Unpack[ToolOptions]) -> Callable[[Callable[P, R]], FunctionTool[P, R]]: ...
    def tool(  # no `/` here: mypy rejects it in an overloaded method's implementation
        self, fn: Callable[P, R] | None = None, **options: Unpack[ToolOptions]
    ) -> FunctionTool[P, R] | Callable[[Callable[P, R]], FunctionTool[P, R]]:
        """``@registry.tool`` / ``@registry.tool(policy="ask", ...)``: ``@tool`` with the same
        options, registered here; the decorated name is the registered ``FunctionTool``."""

        def register(f: Callable[P, R]) -> FunctionTool[P, R]:
            made = FunctionTool(f, **options)
            self._register(made)
            return made

        return register(fn) if fn is not None else register

    def get(self, name: str) -> BaseTool | None:
        return self._tools.get(name)

    def __getitem__(self, name: str) -> BaseTool:
        return self._tools[name]

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[BaseTool]:
        return iter(list(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    @property
    def specs(self) -> list[Tool]:
        """Every tool's ``msgwire.Tool``, in registration order."""
        return [t.spec for t in self._tools.values()]
