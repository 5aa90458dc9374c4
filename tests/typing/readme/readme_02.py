import os

import httpx
import msgwire

url = "https://api.openai.com/v1/chat/completions"              # or any server of the dialect
headers = {"Authorization": f"Bearer {os.environ['OPENAI_API_KEY']}"}
body = {"model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": "Hi!"}]}

with httpx.Client() as client:
    with client.stream("POST", url, json=body, headers=headers) as response:
        with msgwire.stream(response, "openai") as events:      # or "anthropic", "gemini", ...
            for event in events:
                if event.type == "text_delta":
                    print(event.text, end="", flush=True)
                elif event.type == "tool_call_end":
                    print(event.block.name, event.block.parsed_arguments())
            message = events.message()                           # an AssistantMessage
