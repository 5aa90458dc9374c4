import asyncio

from agents import Agent, Runner, function_tool

from msgwire.harness.providers import OpenAI
from msgwire.interop.openai_agents import MsgwireModel
from msgwire.testing import ScriptedServer, reply, tool_call


@function_tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


async def main() -> None:
    with ScriptedServer([reply([tool_call("add", {"a": 2, "b": 3})]), reply("5")]) as server:  # a local model server
        model = MsgwireModel(OpenAI(model="gpt-4o", base_url=server.url, api_key="test"))  # OpenAI(model="gpt-4o")
        agent = Agent(name="calculator", model=model, tools=[add])  # was: model="gpt-4o"
        try:
            result = await Runner.run(agent, "What is 2 + 3?")
        finally:
            await model.close()  # its HTTP connections on this event loop
        assert result.final_output == "5"


asyncio.run(main())
