import msgwire
from msgwire.interop.pydantic_ai import from_model_messages, to_model_messages
from pydantic_ai import Agent
from pydantic_ai.models.test import TestModel

agent = Agent(TestModel())                        # any pydantic-ai agent
session = msgwire.Session(messages=[msgwire.user("What's 6 × 7?"), msgwire.assistant("42")])
result = agent.run_sync("next?", message_history=to_model_messages(session))
session = from_model_messages(result.all_messages())
