import os
import sys

import httpx
import msgwire

anthropic_url = "https://api.anthropic.com/v1/messages"
headers = {"x-api-key": os.environ["ANTHROPIC_API_KEY"], "anthropic-version": "2023-06-01"}
body = {"model": "claude-sonnet-4-6", "max_tokens": 1024, "stream": True,
        "messages": [{"role": "user", "content": "Hi!"}]}

# an Anthropic stream in, OpenAI Chat Completions chunks out, as the bytes arrive
with httpx.stream("POST", anthropic_url, json=body, headers=headers) as upstream:
    for chunk in msgwire.transcode(upstream, "anthropic", "openai"):
        sys.stdout.buffer.write(chunk)       # to your client: data: {...chat.completion.chunk...} ... data: [DONE]
