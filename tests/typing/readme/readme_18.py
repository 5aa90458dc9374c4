from pydantic_ai import Agent

from msgwire.harness.providers import OpenAI
from msgwire.interop.pydantic_ai import MsgwireModel
from msgwire.testing import ScriptedServer, reply

with ScriptedServer([reply("Paris.")]) as server:  # a local model server; drop base_url for OpenAI's
    model = MsgwireModel(OpenAI(model="gpt-4o", base_url=server.url, api_key="test"))
    agent = Agent(model)  # was: Agent("openai:gpt-4o")
    result = agent.run_sync("Capital of France?")
    assert result.output == "Paris."
