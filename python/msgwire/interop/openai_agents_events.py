"""msgwire's stream events as the Responses stream events openai-agents' own Chat Completions
model yields (``OpenAIChatCompletionsModel``, whose stream handler its LiteLLM model shares),
in its order, and the output items of a whole reply as that model gives them: for every
dialect whose replies are not Responses (OpenAI Chat and compatible servers, Anthropic, Gemini,
Ollama). ``MsgwireModel`` (``msgwire.interop.openai_agents_model``) drives it.

The order, as openai-agents yields it: ``response.created`` on the reply's start; a reasoning
item first (index 0: its ``output_item.added``, a summary part and its text deltas, the part
closed when the answer or a call begins); the assistant message (``output_item.added``, its
text part, text deltas) and each function call (``output_item.added`` once it has an id and a
name, then its argument deltas) as they arrive; at the end the reasoning item's
``output_item.done``, the text part's ``content_part.done``, each call's ``output_item.done``,
the message's ``output_item.done``, and ``response.completed`` whose response holds the items
(reasoning, the calls made before the message, the message, the calls after) and the usage.

Items made from another API than Responses carry openai-agents' placeholder id ``__fake_id__``
and ``provider_data`` ``{"model", "response_id"}``. Thinking is a reasoning summary; signed or
redacted thinking (Anthropic's, Gemini's signatures) is also kept whole in the reasoning item's
``provider_data.thinking_blocks`` (the shape openai-agents' LiteLLM model writes) with
``provider_data.provider`` naming whose it is, so that the next request sends it back as that
provider's own. Where msgwire's message says more than the stream did, the message wins: a
refusal (``stop_reason == "refusal"``) is the message's refusal part, a call that came without
an id gets a made-up one (``call_`` and 24 hex digits), each call its whole arguments."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from ..types import (
    AssistantMessage,
    Event,
    MessageStart,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCallBegin,
    ToolCallBlock,
    ToolCallDelta,
    Usage,
    new_id,
)
from .openai_agents_deltas import maker
from .openai_agents_hints import ChatHints
from .openai_agents_request import FAKE_ID, THINKING_PROVIDER

try:
    from agents.exceptions import ModelBehaviorError
    from openai.types.responses import (
        Response,
        ResponseCompletedEvent,
        ResponseContentPartAddedEvent,
        ResponseContentPartDoneEvent,
        ResponseCreatedEvent,
        ResponseFunctionCallArgumentsDeltaEvent,
        ResponseFunctionToolCall,
        ResponseOutputItem,
        ResponseOutputItemAddedEvent,
        ResponseOutputItemDoneEvent,
        ResponseOutputMessage,
        ResponseOutputRefusal,
        ResponseOutputText,
        ResponseReasoningItem,
        ResponseReasoningSummaryPartAddedEvent,
        ResponseReasoningSummaryPartDoneEvent,
        ResponseReasoningSummaryTextDeltaEvent,
        ResponseReasoningTextDeltaEvent,
        ResponseReasoningTextDoneEvent,
        ResponseRefusalDeltaEvent,
        ResponseStreamEvent,
        ResponseTextDeltaEvent,
        ResponseUsage,
    )
    from openai.types.responses.response_reasoning_item import Content, Summary
    from openai.types.responses.response_reasoning_summary_part_added_event import Part as AddedPart
    from openai.types.responses.response_reasoning_summary_part_done_event import Part as DonePart
    from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails
except ImportError as exc:  # pragma: no cover - the package's import says which extra
    from ..errors import MissingExtraError

    raise MissingExtraError("msgwire.interop.openai_agents (MsgwireModel)", "openai-agents", exc) from None

try:  # openai-agents' own mark of a response that completed without usage (0.24)
    from agents.usage import _mark_request_completed_without_usage as _mark_without_usage
except ImportError:  # older releases count such a response without it

    def _mark_without_usage(response: Any) -> None:
        return None


__all__ = [
    "FILTERED",
    "LENGTH_WITHOUT_OUTPUT",
    "ChatEvents",
    "base_response",
    "call_id",
    "output_items",
    "response_usage",
]

REASONING_FIELD = "_chat_completions_reasoning_field"
"""openai-agents' mark, in a reasoning item's ``provider_data``, of reasoning text that came as
Chat Completions' ``reasoning`` (its value ``"reasoning"``)."""

FILTERED = "Response withheld by the provider's content filter."
"""openai-agents' refusal for a reply the provider's content filter withheld, with nothing said."""
LENGTH_WITHOUT_OUTPUT = (
    "{dialect} stream terminated with finish_reason='length' but produced no assistant text, tool call, or refusal."
)
"""openai-agents' own error for a reply cut by its token limit before anything was said."""


# the delta events, one a chunk: made without validating what this module made (deltas.maker)
_TEXT = maker(
    ResponseTextDeltaEvent,
    {"content_index": 0, "delta": "a", "item_id": FAKE_ID, "output_index": 0, "type": "response.output_text.delta",
     "sequence_number": 1, "logprobs": []},
)  # fmt: skip
_REFUSAL = maker(
    ResponseRefusalDeltaEvent,
    {"content_index": 0, "delta": "a", "item_id": FAKE_ID, "output_index": 0, "type": "response.refusal.delta",
     "sequence_number": 1},
)  # fmt: skip
_ARGUMENTS = maker(
    ResponseFunctionCallArgumentsDeltaEvent,
    {"delta": "a", "item_id": FAKE_ID, "output_index": 0, "type": "response.function_call_arguments.delta",
     "sequence_number": 1},
)  # fmt: skip
_SUMMARY_TEXT = maker(
    ResponseReasoningSummaryTextDeltaEvent,
    {"delta": "a", "item_id": FAKE_ID, "output_index": 0, "summary_index": 0,
     "type": "response.reasoning_summary_text.delta", "sequence_number": 1},
)  # fmt: skip
_REASONING_TEXT = maker(
    ResponseReasoningTextDeltaEvent,
    {"delta": "a", "item_id": FAKE_ID, "output_index": 0, "content_index": 0, "type": "response.reasoning_text.delta",
     "sequence_number": 1},
)  # fmt: skip


def call_id(given: str) -> str:
    """A tool call's id, made up when the provider sent none (openai-agents pairs a call and its
    output by it: every call needs its own)."""
    return given or f"call_{new_id().replace('-', '')[-24:]}"


def response_usage(usage: Usage | None) -> ResponseUsage | None:
    """msgwire's usage (one total for the reply) as the Responses usage openai-agents reads. The
    total is input and output; a provider that counts more reasoning tokens than output tokens
    (xAI) counts them apart from its output, and in its total: they are added."""
    if usage is None:
        return None
    details = {"cached_tokens": usage.cache_read_tokens, "cache_write_tokens": usage.cache_write_tokens}
    apart = usage.reasoning_tokens if usage.reasoning_tokens > usage.output_tokens else 0
    return ResponseUsage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        total_tokens=usage.input_tokens + usage.output_tokens + apart,
        input_tokens_details=InputTokensDetails.model_validate(details),
        output_tokens_details=OutputTokensDetails(reasoning_tokens=usage.reasoning_tokens),
    )


def base_response(model: str, settings: Any, tools_sent: bool) -> Response:
    """The response ``response.created`` carries (as openai-agents makes it for a reply of
    another API than Responses): no output yet, the call's settings."""
    choice = settings.tool_choice
    if choice is None or choice not in ("auto", "required", "none"):
        tool_choice: Any = "auto" if choice is None else {"type": "function", "name": choice}
    else:
        tool_choice = choice
    return Response(
        id=FAKE_ID,
        created_at=time.time(),
        model=model,
        object="response",
        output=[],
        tool_choice=tool_choice,
        top_p=settings.top_p,
        temperature=settings.temperature,
        tools=[],
        parallel_tool_calls=bool(settings.parallel_tool_calls) if tools_sent else False,
        reasoning=settings.reasoning,
    )


def _thinking_data(blocks: Iterable[ThinkingBlock]) -> list[dict[str, Any]] | None:
    """Signed or redacted thinking, whole, as openai-agents' LiteLLM model keeps Anthropic's."""
    listed = list(blocks)
    if not any(b.signature or b.redacted for b in listed):
        return None
    out: list[dict[str, Any]] = []
    for block in listed:
        if block.redacted:
            out.append({"type": "redacted_thinking", "data": block.redacted})
        else:
            entry: dict[str, Any] = {"type": "thinking", "thinking": block.thinking}
            if block.signature:
                entry["signature"] = block.signature
            out.append(entry)
    return out


def _keep_thinking(item: ResponseReasoningItem, message: AssistantMessage) -> None:
    """Signed or redacted thinking kept whole in the item's ``provider_data`` (and, as
    openai-agents' LiteLLM model does, its text as reasoning text and its last signature as the
    encrypted content, where the item has none)."""
    data = _thinking_data(b for b in message.content if isinstance(b, ThinkingBlock))
    if data is None:
        return
    provider_data = dict(getattr(item, "provider_data", None) or {})
    provider_data["thinking_blocks"] = data
    provider_data[THINKING_PROVIDER] = message.provider
    provider_data.pop(REASONING_FIELD, None)
    item.provider_data = provider_data  # type: ignore[attr-defined]  # an extra field, as openai-agents sets it
    text = "".join(b.get("thinking", "") for b in data)
    if text and not item.content:
        item.content = [Content(text=text, type="reasoning_text")]
    signatures = [b["signature"] for b in data if b.get("signature")]
    if signatures:
        item.encrypted_content = signatures[-1]


def _text_part(text: str) -> ResponseOutputText:
    return ResponseOutputText(text=text, type="output_text", annotations=[], logprobs=[])


def _function_call(cid: str, name: str, arguments: str, provider_data: dict[str, Any]) -> ResponseFunctionToolCall:
    fields: dict[str, Any] = {"id": FAKE_ID, "call_id": cid, "arguments": arguments, "name": name}
    if provider_data:
        fields["provider_data"] = dict(provider_data)
    return ResponseFunctionToolCall(type="function_call", **fields)


def _provider_data(model: str, response_id: str | None) -> dict[str, Any]:
    return {"model": model, "response_id": response_id} if response_id else {"model": model}


def _message(part: Any, data: dict[str, Any], status: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        id=FAKE_ID,
        content=[part] if part is not None else [],
        role="assistant",
        type="message",
        status=status,  # type: ignore[arg-type]  # "in_progress" or "completed"
        provider_data=dict(data),  # type: ignore[call-arg]  # an extra field
    )


def _reasoning_item(data: dict[str, Any], raw: bool) -> ResponseReasoningItem:
    if raw:  # Chat Completions' `reasoning`: reasoning text, marked so, as openai-agents marks it
        return ResponseReasoningItem(
            id=FAKE_ID,
            summary=[],
            content=[Content(text="", type="reasoning_text")],
            type="reasoning",
            provider_data={**data, REASONING_FIELD: "reasoning"},  # type: ignore[call-arg]  # an extra field
        )
    return ResponseReasoningItem(id=FAKE_ID, summary=[], type="reasoning", provider_data=dict(data))  # type: ignore[call-arg]


def _signed(message: AssistantMessage) -> bool:
    return any(isinstance(b, ThinkingBlock) and (b.signature or b.redacted) for b in message.content)


def output_items(message: AssistantMessage, model: str, hints: ChatHints | None = None) -> list[ResponseOutputItem]:
    """A whole reply (not streamed) as openai-agents' Chat Completions model gives its items:
    reasoning, the message (its text, or its refusal), the function calls."""
    data = _provider_data(model, message.response_id)
    items: list[ResponseOutputItem] = []
    thinking = "".join(b.thinking for b in message.content if isinstance(b, ThinkingBlock))
    if thinking or _signed(message):
        raw = hints is not None and hints.reasoning_text
        reasoning = _reasoning_item(data, raw)
        if raw:
            reasoning.content = [Content(text=thinking, type="reasoning_text")]
        elif thinking:
            reasoning.summary = [Summary(text=thinking, type="summary_text")]
        _keep_thinking(reasoning, message)
        items.append(reasoning)
    text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
    refused = hints.refusing if hints is not None else False
    if not text and not refused and message.stop_reason == "content_filter" and not message.tool_calls:
        text, refused = FILTERED, True
    if text:
        part: Any = ResponseOutputRefusal(refusal=text, type="refusal") if refused else _text_part(text)
        items.append(_message(part, data, "completed"))
    items += [
        _function_call(call_id(b.id), b.name, b.arguments, data)
        for b in message.content
        if isinstance(b, ToolCallBlock)
    ]
    return items


class _Call:
    __slots__ = ("arguments", "call_id", "name", "output_index")

    def __init__(self, cid: str, name: str) -> None:
        self.call_id, self.name = cid, name
        self.arguments: list[str] = []
        self.output_index = -1


class ChatEvents:
    """One reply's Responses stream events, as openai-agents' Chat Completions model yields them
    (the module docs): ``feed(event)`` for each msgwire event gives the events it makes,
    ``finish(message)`` the closing ones, ``response.completed`` last. ``hints``: what the
    reply's bytes said that the events do not (``ChatHints``; an OpenAI-compatible reply)."""

    def __init__(self, base: Response, model: str, dialect: str, hints: ChatHints | None = None) -> None:
        self._base = base
        self._model = model
        self._dialect = dialect
        self._hints = hints
        self._seq = 0
        self._data: dict[str, Any] = {"model": model}
        self._reasoning: ResponseReasoningItem | None = None
        self._raw_reasoning = False  # reasoning text (Chat Completions' `reasoning`), not a summary
        self._late = False  # the reasoning began after the answer or a call: it goes last
        self._thinking: list[str] = []  # the reasoning text, or the open summary part's
        self._summary_open = False
        self._summaries: list[str] = []
        self._text: list[str] | None = None
        self._refusal = False  # the text is a refusal
        self._message_index: int | None = None
        self._calls: dict[int, _Call] = {}  # by the block's index in msgwire's message
        self._placed: dict[int, int] = {}  # a call's output index, once it was given one

    def _next(self) -> int:
        self._seq += 1
        return self._seq - 1

    # --- as events arrive ---------------------------------------------------------------------

    def start(self) -> ResponseStreamEvent:
        return ResponseCreatedEvent(response=self._base, type="response.created", sequence_number=self._next())

    def feed(self, event: Event) -> list[ResponseStreamEvent]:
        if type(event) is TextDelta:
            return self._on_text(event.text)
        if type(event) is ToolCallDelta:
            call = self._calls.get(event.index)
            if call is None or not event.fragment:
                return []
            call.arguments.append(event.fragment)
            return [
                _ARGUMENTS(
                    delta=event.fragment,
                    item_id=FAKE_ID,
                    output_index=call.output_index,
                    type="response.function_call_arguments.delta",
                    sequence_number=self._next(),
                )
            ]
        if type(event) is ThinkingDelta:
            if event.thinking:
                return self._on_thinking(event.thinking)
            if (event.signature or event.redacted) and self._reasoning is None:
                return self._open_reasoning()  # signed thinking without text: its item all the same
            return []
        if type(event) is ToolCallBegin:
            return self._on_call(event)
        if type(event) is MessageStart and event.response_id:
            self._data["response_id"] = event.response_id
        return []

    def _open_reasoning(self) -> list[ResponseStreamEvent]:
        self._raw_reasoning = self._hints is not None and self._hints.reasoning_text
        self._reasoning = _reasoning_item(self._data, self._raw_reasoning)
        if self._message_index is not None or self._placed:
            self._late = True  # after the answer or a call began: announced at the end, last
            return []
        return [
            ResponseOutputItemAddedEvent(
                item=self._reasoning, output_index=0, type="response.output_item.added", sequence_number=self._next()
            )
        ]

    def _on_thinking(self, text: str) -> list[ResponseStreamEvent]:
        out = self._open_reasoning() if self._reasoning is None else []
        self._thinking.append(text)
        if self._raw_reasoning:
            out.append(
                _REASONING_TEXT(
                    delta=text,
                    item_id=FAKE_ID,
                    output_index=0,
                    content_index=0,
                    type="response.reasoning_text.delta",
                    sequence_number=self._next(),
                )
            )
            return out
        if not self._summary_open:
            self._summary_open = True
            self._thinking = [text]
            self._summaries.append("")
            out.append(
                ResponseReasoningSummaryPartAddedEvent(
                    item_id=FAKE_ID,
                    output_index=0,
                    summary_index=len(self._summaries) - 1,
                    part=AddedPart(text="", type="summary_text"),
                    type="response.reasoning_summary_part.added",
                    sequence_number=self._next(),
                )
            )
        out.append(
            _SUMMARY_TEXT(
                delta=text,
                item_id=FAKE_ID,
                output_index=0,
                summary_index=len(self._summaries) - 1,
                type="response.reasoning_summary_text.delta",
                sequence_number=self._next(),
            )
        )
        return out

    def _close_summary(self) -> list[ResponseStreamEvent]:
        """The open summary part ends where the answer or a call begins."""
        if not self._summary_open:
            return []
        self._summary_open = False
        index = len(self._summaries) - 1
        self._summaries[index] = "".join(self._thinking)
        self._thinking = []
        return [
            ResponseReasoningSummaryPartDoneEvent(
                item_id=FAKE_ID,
                output_index=0,
                summary_index=index,
                part=DonePart(text=self._summaries[index], type="summary_text"),
                type="response.reasoning_summary_part.done",
                sequence_number=self._next(),
            )
        ]

    def _reasoning_count(self) -> int:
        return 1 if self._reasoning is not None and not self._late else 0

    def _message_output_index(self) -> int:
        if self._message_index is None:
            self._message_index = self._reasoning_count() + (len(self._calls) if self._placed else 0)
        return self._message_index

    def _call_output_index(self, index: int) -> int:
        placed = self._placed.get(index)
        if placed is not None:
            return placed
        offset = list(self._calls).index(index)
        at = self._reasoning_count() + offset
        if self._message_index is not None and offset >= self._message_index - self._reasoning_count():
            at += 1
        self._placed[index] = at
        return at

    def _on_text(self, text: str) -> list[ResponseStreamEvent]:
        if self._text is not None:
            self._text.append(text)
            return [self._text_delta(text)]
        return self._close_summary() + self._open_message(
            text, refusal=self._hints is not None and self._hints.refusing
        )

    def _open_message(self, text: str, *, refusal: bool) -> list[ResponseStreamEvent]:
        """The message item opened, its one part (a refusal when ``refusal``) with ``text`` as
        its first delta."""
        self._text, self._refusal = [text], refusal
        at = self._message_output_index()
        return [
            ResponseOutputItemAddedEvent(
                item=_message(None, self._data, "in_progress"),
                output_index=at,
                type="response.output_item.added",
                sequence_number=self._next(),
            ),
            ResponseContentPartAddedEvent(
                content_index=0,
                item_id=FAKE_ID,
                output_index=at,
                part=ResponseOutputRefusal(refusal="", type="refusal") if refusal else _text_part(""),
                type="response.content_part.added",
                sequence_number=self._next(),
            ),
            self._text_delta(text),
        ]

    def _text_delta(self, text: str) -> ResponseStreamEvent:
        if self._refusal:
            return _REFUSAL(
                content_index=0,
                delta=text,
                item_id=FAKE_ID,
                output_index=self._message_index,
                type="response.refusal.delta",
                sequence_number=self._next(),
            )
        return _TEXT(
            content_index=0,
            delta=text,
            item_id=FAKE_ID,
            output_index=self._message_index,
            type="response.output_text.delta",
            sequence_number=self._next(),
            logprobs=[],
        )

    def _on_call(self, begin: ToolCallBegin) -> list[ResponseStreamEvent]:
        out = self._close_summary()
        call = _Call(call_id(begin.id), begin.name)
        self._calls[begin.index] = call
        call.output_index = self._call_output_index(begin.index)
        out.append(
            ResponseOutputItemAddedEvent(
                item=_function_call(call.call_id, call.name, "", self._data),
                output_index=call.output_index,
                type="response.output_item.added",
                sequence_number=self._next(),
            )
        )
        return out

    # --- the end ------------------------------------------------------------------------------

    def finish(self, message: AssistantMessage) -> list[ResponseStreamEvent]:
        """The closing events and ``response.completed``, from the whole ``message``."""
        if (
            message.stop_reason == "length"
            and self._text is None
            and not self._calls
            and not any(isinstance(b, (TextBlock, ToolCallBlock)) for b in message.content)
        ):
            dialect = "Chat Completions" if self._dialect == "openai" else self._dialect
            raise ModelBehaviorError(LENGTH_WITHOUT_OUTPUT.format(dialect=dialect))
        out: list[ResponseStreamEvent] = []
        if message.stop_reason == "content_filter" and self._text is None and not self._calls:
            out += self._filtered()
        if self._reasoning is None and _signed(message):  # signed thinking without text: an item all the same
            out += self._open_reasoning()
        outputs: list[ResponseOutputItem] = []
        reasoning = self._reasoning
        if reasoning is not None and not self._late:
            out += self._finish_reasoning(reasoning, message, 0)
            outputs.append(reasoning)
        part: Any = None
        if self._text is not None:
            text = "".join(self._text)
            part = ResponseOutputRefusal(refusal=text, type="refusal") if self._refusal else _text_part(text)
            out.append(
                ResponseContentPartDoneEvent(
                    content_index=0,
                    item_id=FAKE_ID,
                    output_index=self._message_output_index(),
                    part=part,
                    type="response.content_part.done",
                    sequence_number=self._next(),
                )
            )
        calls = self._final_calls(message)
        out += [
            ResponseOutputItemDoneEvent(
                item=item,
                output_index=self._call_output_index(index),
                type="response.output_item.done",
                sequence_number=self._next(),
            )
            for index, item in calls
        ]
        before = (self._message_index - self._reasoning_count()) if self._message_index is not None else len(calls)
        outputs += [item for _, item in calls[:before]]
        if part is not None:
            done = _message(part, self._data, "completed")
            outputs.append(done)
            out.append(
                ResponseOutputItemDoneEvent(
                    item=done,
                    output_index=self._message_output_index(),
                    type="response.output_item.done",
                    sequence_number=self._next(),
                )
            )
        outputs += [item for _, item in calls[before:]]
        if reasoning is not None and self._late:
            at = len(outputs)
            out.append(
                ResponseOutputItemAddedEvent(
                    item=reasoning, output_index=at, type="response.output_item.added", sequence_number=self._next()
                )
            )
            out += self._finish_reasoning(reasoning, message, at)
            outputs.append(reasoning)
        final = self._base.model_copy()
        final.output = outputs
        final.usage = response_usage(message.usage)
        if final.usage is None:
            _mark_without_usage(final)
        out.append(ResponseCompletedEvent(response=final, type="response.completed", sequence_number=self._next()))
        return out

    def _finish_reasoning(
        self, reasoning: ResponseReasoningItem, message: AssistantMessage, at: int
    ) -> list[ResponseStreamEvent]:
        out: list[ResponseStreamEvent] = []
        if self._raw_reasoning:
            text = "".join(self._thinking)
            reasoning.content = [Content(text=text, type="reasoning_text")]
            if self._thinking:
                out.append(
                    ResponseReasoningTextDoneEvent(
                        item_id=FAKE_ID,
                        output_index=at,
                        content_index=0,
                        text=text,
                        type="response.reasoning_text.done",
                        sequence_number=self._next(),
                    )
                )
        else:
            out += self._close_summary()
            reasoning.summary = [Summary(text=text, type="summary_text") for text in self._summaries]
        _keep_thinking(reasoning, message)
        out.append(
            ResponseOutputItemDoneEvent(
                item=reasoning, output_index=at, type="response.output_item.done", sequence_number=self._next()
            )
        )
        return out

    def _final_calls(self, message: AssistantMessage) -> list[tuple[int, ResponseFunctionToolCall]]:
        """Each call streamed, with the arguments msgwire's message holds (whole, as the
        provider sent them), in the order they began."""
        blocks = {i: b for i, b in enumerate(message.content) if isinstance(b, ToolCallBlock)}
        calls = []
        for index, call in self._calls.items():
            block = blocks.get(index)
            arguments = block.arguments if block is not None else "".join(call.arguments)
            calls.append((index, _function_call(call.call_id, call.name, arguments, self._data)))
        return calls

    def _filtered(self) -> list[ResponseStreamEvent]:
        """A reply the provider's content filter withheld, with nothing else said: a refusal, as
        openai-agents makes it."""
        return self._open_message(FILTERED, refusal=True)
