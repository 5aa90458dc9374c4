import anthropic
import msgwire
from msgwire import context, formats

session = msgwire.Session(system_prompt="Be brief.", messages=[msgwire.user("What's 6 × 7?")])
client = anthropic.Anthropic()                   # the SDK, with ANTHROPIC_API_KEY set

ctx = context.build(session, window=20)          # what to send: system first, a user message
                                                 # guaranteed, tool results never cut from calls
body = formats.to_request(ctx.messages, "anthropic", system_prompt=ctx.system_prompt)
client.messages.create(model="claude-sonnet-4-6", max_tokens=1024, **body)
session = formats.from_request(body, "anthropic")  # and back
