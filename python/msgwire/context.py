"""``msgwire.context``: what to send to a model each turn, from a long history.

``build(session, window=20)`` returns a ``Context``: the system prompt, then ``messages``, the
last ``window`` messages of the history (widened so that no tool result loses its call) with,
when needed, one user message in front of them. An agent harness keeps the whole history in
the session and sends ``ctx.messages`` each turn::

    ctx = msgwire.context.build(session, window=20, counter=counter)
    counter = ctx.counter                  # keep it for the next turn
    reply = call_model(system=ctx.system_prompt, messages=ctx.messages)
    session.append(reply)                  # the synthetic message, if any, is never persisted
    if ctx.idle:                           # that was the third synthetic message in a row: it
        ...                                # was sent; now wait for a real user message

Terms
-----

- *history*: ``session.messages_for_model()``; ``system_control`` and unknown messages are
  never sent.
- *real user message*: a ``UserMessage`` whose ``source`` is ``"direct"`` or ``"broadcast"``
  (``msgwire.types.REAL_SOURCES``); a stored ``"synthetic"`` one, or system-provided
  ``"context"`` (an MCP resource, an attached file), is sent where it is but never counts as real.
- *answers*: a tool result answers the most recent earlier assistant message holding a tool
  call with its ``tool_call_id``.
- *window*: the last ``window`` messages of the history (all of it for ``window=None``),
  widened toward the past until no tool result in it answers an assistant message outside it.

Guarantees
----------

For every session and every ``window >= 1`` (or ``None``):

1. ``system_prompt`` is the session's: sent first, never windowed out.
2. ``messages`` is never empty and ``messages[0]`` is a ``UserMessage`` (Claude on Bedrock,
   and Anthropic's own API in its earlier versions, reject a conversation opening otherwise).
3. ``messages`` holds a real user message whenever the history holds one; only when it holds
   none at all is a synthetic one (``source="synthetic"``, text ``synthetic_text``) added.
4. Apart from that synthetic message, every message comes from the history, in history order,
   the same objects; ``system_control`` and unknown messages are never included.
5. Tool calls and results travel together: every tool result in ``messages`` that answers a
   call of the history comes after that assistant message, which is in ``messages`` too; every
   result the history holds for a call in ``messages`` is in ``messages``.
6. When ``msgwire.validate(session)`` passes, ``msgwire.validate(ctx.messages)`` passes.
7. Nothing is modified: not the session, not its message list, not the counter passed in; the
   synthetic message is created here, the one place that ever creates one, and never appended.
8. The last ``window`` messages of the history are all in ``messages`` (more when widened),
   but for row 3 below, which drops the window's opening non-user messages (and the results
   of the calls among them).

The opening
-----------

After widening, one of four things opens ``messages``, chosen by the table below:

- the window itself, when it opens with a user message (of any source) and holds a real one;
- *pinned*: the most recent real user message before the window, placed first, where it belongs
  chronologically (it predates the window). Pinned when the window holds no real user message
  (so the model keeps seeing what it was asked) and also when the window opens with a
  non-user message, since the user message those turns answer is the one to show;
- *opening trimmed*: when the window opens with a non-user message, holds a real user message,
  and no real user message precedes it (the history opens with a greeting or with turns run
  before any user spoke), the window starts at its first user message instead, dropping the
  tool results that answer the calls dropped with it;
- *synthetic*: when the history holds no real user message at all.

Truth table
-----------

Inputs: *real in window*: a real user message is in the window (after widening); *opens
with user*: the window's first message is a user message, of any source (false for an empty
window); *real before*: a real user message precedes the window; *prev count*: the
``counter.count`` passed in (0 for ``counter=None``). Outputs: *pinned*, *synthetic*:
``ctx.pinned`` / ``ctx.synthetic`` is set; *trimmed*: the opening was trimmed (row 3);
*new count*, *idle*: ``ctx.counter.count``, ``ctx.idle``. The rows are disjoint and cover every input.

| # | real in window | opens with user | real before | prev count | pinned | synthetic | trimmed | new count | idle |
|---|----------------|-----------------|-------------|------------|--------|-----------|---------|-----------|------|
| 1 | yes            | yes             | any         | any        | no     | no        | no      | 0         | no   |
| 2 | yes            | no              | yes         | any        | yes    | no        | no      | 0         | no   |
| 3 | yes            | no              | no          | any        | no     | no        | yes     | 0         | no   |
| 4 | no             | any             | yes         | any        | yes    | no        | no      | 0         | no   |
| 5 | no             | any             | no          | 0          | no     | yes       | no      | 1         | no   |
| 6 | no             | any             | no          | 1          | no     | yes       | no      | 2         | no   |
| 7 | no             | any             | no          | 2          | no     | yes       | no      | 3         | yes  |
| 8 | no             | any             | no          | n >= 3     | no     | yes       | no      | n + 1     | yes  |

The pin
-------

``pin`` says what opens a window that holds no real user message (rows 4 to 8): ``"history"``
(the default) the most recent real user message before the window, as the table says; a
``UserMessage``, a swarm's *mission* (its latest broadcast, which may lie far outside the
window or not be in this history at all): that message, pinned, and the counter reset, as row 4
does; ``None``: nothing, so that a synthetic message opens it (rows 5 to 8) even when an older
real message exists (a swarm's direct message no longer holds an agent once it left the
window). A pinned mission is the one message of ``messages`` that need not come from the
history (guarantee 4).

The encouragement counter
-------------------------

``EncouragementCounter`` counts consecutive synthetic insertions and reports ``idle`` from the
third on (``count >= 3``). It resets when the built context holds a real user message, in the
window or pinned: that is, whenever the history holds one, however old, since a synthetic
message is inserted exactly when it holds none. ``build`` never acts on ``idle``: the caller
decides (typically: stop nudging and wait for a user).

What ``build`` does not do
--------------------------

It does not repair a history: calls without results (the turn in progress, or abandoned
calls) are sent as they are, and so is a result that answers no call; it never reorders, so a
user message recorded between a call and its result stays there (both OpenAI and Anthropic
want results right after their call: a dialect that must move it can). ``validate`` the
session to find such problems.
"""

from __future__ import annotations

from typing import Literal, TypeGuard

from .types import (
    REAL_SOURCES,
    AssistantMessage,
    Context,
    EncouragementCounter,
    Message,
    Session,
    TextBlock,
    ToolResultMessage,
    UserMessage,
)

__all__ = ["Context", "EncouragementCounter", "build"]

_NO_CALL = -1

# The truth table the module docstring and docs/context.md show, as data: tests/context/test_context.py
# runs one test per row and checks that both documents hold `_render_table()` verbatim.
_TABLE_HEADER = (
    "#",
    "real in window",
    "opens with user",
    "real before",
    "prev count",
    "pinned",
    "synthetic",
    "trimmed",
    "new count",
    "idle",
)
_TABLE = (
    ("1", "yes", "yes", "any", "any", "no", "no", "no", "0", "no"),
    ("2", "yes", "no", "yes", "any", "yes", "no", "no", "0", "no"),
    ("3", "yes", "no", "no", "any", "no", "no", "yes", "0", "no"),
    ("4", "no", "any", "yes", "any", "yes", "no", "no", "0", "no"),
    ("5", "no", "any", "no", "0", "no", "yes", "no", "1", "no"),
    ("6", "no", "any", "no", "1", "no", "yes", "no", "2", "no"),
    ("7", "no", "any", "no", "2", "no", "yes", "no", "3", "yes"),
    ("8", "no", "any", "no", "n >= 3", "no", "yes", "no", "n + 1", "yes"),
)


def build(
    session: Session,
    window: int | None = 20,
    *,
    synthetic_text: str = "Continue.",
    counter: EncouragementCounter | None = None,
    pin: Literal["history"] | UserMessage | None = "history",
) -> Context:
    """What to send for the next model call: the last ``window`` messages for the model, made
    safe to send (see the module documentation for every guarantee and the truth table).

    ``window`` counts messages of ``session.messages_for_model()`` (``None``: all of them; it
    must be at least 1, since an empty window would show the model nothing it just did).
    ``synthetic_text`` is the text of the user message added when the history holds no real
    user message. ``counter`` is the previous turn's ``ctx.counter`` (``None``: a new one).
    ``pin``: what opens a window without a real user message (see "The pin" in the module docs).

    A tool result at the window's edge pulls its call (and so every result of that call) into
    the window instead of being dropped: a result without its call is rejected by both OpenAI
    and Anthropic, and dropping it would hide what the model's last action produced.
    """
    if isinstance(window, bool) or not isinstance(window, int | None):
        raise TypeError(f"window must be an int or None, got {type(window).__name__}")
    if window is not None and window < 1:
        raise ValueError(f"window must be at least 1, got {window} (None sends the whole history)")
    if not isinstance(synthetic_text, str) or not synthetic_text.strip():
        raise ValueError("synthetic_text must be non-blank text (providers reject empty text)")
    if counter is None:
        counter = EncouragementCounter()
    elif not isinstance(counter, EncouragementCounter):
        raise TypeError(f"counter must be an EncouragementCounter or None, got {type(counter).__name__}")
    if pin != "history" and pin is not None and not isinstance(pin, UserMessage):
        raise TypeError(f"pin must be 'history', a UserMessage or None, got {type(pin).__name__}")

    history = session.messages_for_model()
    answered = _answered_calls(history)
    start = _widen(answered, len(history) if window is None else window)

    real_in_window = any(_is_real_user(m) for m in history[start:])
    opens_with_user = start < len(history) and isinstance(history[start], UserMessage)
    pinned: UserMessage | None = None
    synthetic: UserMessage | None = None
    if not real_in_window:  # rows 4-8: the pin opens the window, else a synthetic message
        pinned = _latest_real_user(history, start) if pin == "history" else pin
        if pinned is None:
            synthetic = UserMessage(content=[TextBlock(text=synthetic_text)], source="synthetic")
    elif not opens_with_user:  # rows 2 and 3
        pinned = _latest_real_user(history, start)
        if pinned is None:  # row 3: start at the window's first user message
            start = next(i for i in range(start, len(history)) if isinstance(history[i], UserMessage))

    # Results answering a call before `start` are left out with it (only row 3 has any).
    sent: list[Message] = [history[i] for i in range(start, len(history)) if not _NO_CALL < answered[i] < start]
    opening = pinned if pinned is not None else synthetic
    return Context(
        system_prompt=session.system_prompt,
        messages=[opening, *sent] if opening is not None else sent,
        pinned=pinned,
        synthetic=synthetic,
        counter=counter.after(synthetic=synthetic is not None, real_user=synthetic is None),
        window_start=start,
    )


def _is_real_user(message: Message) -> TypeGuard[UserMessage]:
    return isinstance(message, UserMessage) and message.source in REAL_SOURCES


def _answered_calls(history: list[Message]) -> list[int]:
    """For each message, the index of the assistant message whose call it answers (a tool
    result), or ``_NO_CALL`` (any other message, or a result answering no earlier call)."""
    latest: dict[str, int] = {}
    answered = [_NO_CALL] * len(history)
    for i, message in enumerate(history):
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                latest[call.id] = i
        elif isinstance(message, ToolResultMessage):
            answered[i] = latest.get(message.tool_call_id, _NO_CALL)
    return answered


def _widen(answered: list[int], window: int) -> int:
    """Where the window starts: ``window`` messages from the end, moved back until no result
    inside answers a call outside. One backward pass: a call pulled in only moves the start
    back, and the messages it brings in are scanned in turn."""
    start = max(0, len(answered) - window)
    i = len(answered) - 1
    while i >= start:
        if _NO_CALL < answered[i] < start:
            start = answered[i]
        i -= 1
    return start


def _latest_real_user(history: list[Message], before: int) -> UserMessage | None:
    for i in range(before - 1, -1, -1):
        message = history[i]
        if _is_real_user(message):
            return message
    return None


def _render_table() -> str:
    """The truth table as an aligned Markdown table (what the docs hold verbatim)."""
    widths = [max(len(row[i]) for row in (_TABLE_HEADER, *_TABLE)) for i in range(len(_TABLE_HEADER))]

    def line(cells: tuple[str, ...]) -> str:
        return "| " + " | ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True)) + " |"

    rule = "|" + "|".join("-" * (width + 2) for width in widths) + "|"
    return "\n".join([line(_TABLE_HEADER), rule, *(line(row) for row in _TABLE)]) + "\n"


if __name__ == "__main__":
    import sys

    sys.stdout.write(_render_table())
