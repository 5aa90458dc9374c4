import asyncio
from typing import Annotated, Literal

import msgspec
import msgwire
from msgwire import formats
from msgwire.harness import ApprovalRequest, Approve, Conversation, Deny, ToolFailure, ToolRegistry, ToolRunner

tools = ToolRegistry()


@tools.tool
def get_weather(
    city: Annotated[str, msgspec.Meta(min_length=1)], unit: Literal["c", "f"] = "c"
) -> dict[str, object]:
    """Current weather for a city.

    Args:
        city: The city name.
        unit: Celsius or Fahrenheit.
    """
    if city == "Atlantis":
        raise ToolFailure("there is no weather station in Atlantis")  # a domain failure: the model is told
    return {"city": city, "temp": 21, "unit": unit}


@tools.tool(policy="ask", concurrency_safe=False, timeout=30)
async def send_email(to: str, body: str) -> str:
    """Send an email."""
    return f"sent to {to}"


def approver(requests: list[ApprovalRequest]) -> dict[str, Approve | Deny]:  # or async def
    return {  # every call to ask about, at once; a call left out is denied
        r.call.id: Approve(arguments={**r.arguments, "to": "team@example.com"}, by="alice")
        for r in requests
        if r.tool.name == "send_email"
    }


conversation = Conversation(modes={"plan": "Plan only.", "act": "Act."}, mode="plan")  # system prompt: "Plan only."
conversation.add(msgwire.user("The weather in Oslo and Atlantis, then email the team."))
body = formats.to_request(conversation.session(), "anthropic", tools=tools.specs)  # what the model is sent

reply = msgwire.assistant(  # what the model answered (from msgwire.assemble, from_response, ...)
    [
        msgwire.ToolCallBlock(id="c1", name="get_weather", arguments='{"city": "Oslo"}'),
        msgwire.ToolCallBlock(id="c2", name="get_weather", arguments='{"city": "Atlantis"}'),
        msgwire.ToolCallBlock(id="c3", name="send_email", arguments='{"to": "all@example.com", "body": "Hi"}'),
    ],
    stop_reason="tool_use",
)
conversation.add(reply)
with ToolRunner(tools, approver=approver, limit=16) as runner:
    results = asyncio.run(runner.run(reply, conversation=conversation))  # approve, then run

assert [(r.tool_call_id, r.status) for r in results] == [("c1", "success"), ("c2", "error"), ("c3", "success")]
assert results[0].structured_content == {"city": "Oslo", "temp": 21, "unit": "c"}
assert results[2].text == "sent to team@example.com"  # the edited arguments ran
assert [e.decision for e in conversation.entries] == [
    "user_input", "tool_call_requested",
    "tool_call_approved", "tool_call_approved", "tool_call_approved",  # c1, c2 by policy; c3 by alice
    "tool_executed", "tool_failed", "tool_executed",
]

conversation.switch_mode("act", by="alice")  # a system_control entry; the system prompt follows
data = conversation.export_audit()  # JSON bytes; format="jsonl" for append-only logs; or a path
again = Conversation.load_audit(data)
assert again == conversation and again.verify() and again.system_prompt == "Act."
fork = conversation.fork(at=conversation.entries[1].id)  # new id, same past, parent recorded
