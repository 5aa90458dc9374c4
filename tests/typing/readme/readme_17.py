import asyncio
import tempfile

from agents import Agent, Runner, function_tool
from agents.testing import ScriptedModel, assistant_message, function_call  # your model here

from msgwire.harness.store import open_store
from msgwire.interop.openai_agents import StoreSession


@function_tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


model = ScriptedModel([[function_call("add", {"a": 2, "b": 3}, call_id="call_1")], [assistant_message("5")]])
agent = Agent(name="calculator", model=model, tools=[add])


async def main(folder: str) -> None:
    with open_store(f"sqlite:///{folder}/agents.db") as store:  # or "postgresql://user:pw@host:5432/db"
        session = StoreSession("user-42", store)  # was: SQLiteSession("user-42", "agents.db")
        try:
            result = await Runner.run(agent, "What is 2 + 3?", session=session)
            assert result.final_output == "5"
            items = await session.get_items()  # what openai-agents added, equal
            messages = await session.messages()  # the same items as msgwire messages
            assert [m.type for m in messages] == ["user", "assistant", "tool_result", "assistant"]
            assert len(items) == len(messages)
            assert store.load("user-42").verify()  # the audit trail of the session
        finally:
            session.close()  # as SQLiteSession's; the store stays open until its `with` ends


with tempfile.TemporaryDirectory() as folder:
    asyncio.run(main(folder))
