from msgwire.harness import Agent, ApprovalRequest, Approve, Deny, ToolRegistry
from msgwire.harness.providers import OpenAI
from msgwire.testing import ScriptedServer, reply, tool_call

tools = ToolRegistry()

@tools.tool
def read_file(path: str) -> str:
    """Read a file of the workspace."""
    return {"notes.txt": "buy milk"}[path]

@tools.tool(policy="ask")  # the approver decides
def delete_file(path: str) -> str:
    """Delete a file of the workspace."""
    raise AssertionError("denied below: never runs")

def approver(requests: list[ApprovalRequest]) -> dict[str, Approve | Deny]:  # every "ask" call of a step, at once
    return {r.call.id: Deny(reason="keep it") for r in requests}

calls = [tool_call("read_file", {"path": "notes.txt"}), tool_call("delete_file", {"path": "notes.txt"})]
script = [reply(calls), reply("notes.txt says: buy milk. I kept it.")]  # what the local model answers
with (
    ScriptedServer(script) as server,
    OpenAI(base_url=server.url, api_key="sk-test", model="gpt-4o") as model,
    Agent(model, tools=tools, approver=approver, max_tokens=500) as agent,
):
    for event in agent.stream("Read notes.txt, then delete it."):  # the model's events and the loop's
        if event.type == "tool_decided":
            print(event.record.tool, "approved" if event.record.approved else f"denied: {event.record.reason}")
        elif event.type == "tool_finished":
            print(" ", event.result.tool_name, event.result.status, event.result.text)
        elif event.type == "run_end":
            print(event.reason, event.steps, "steps:", event.message.text)
    trail = agent.conversation
    print([entry.decision for entry in trail.entries], bool(trail.verify()))
