import msgwire
from msgwire import formats

openai_body = {
    "model": "gpt-4o", "seed": 7, "tool_choice": "required",
    "messages": [{"role": "user", "content": "Weather in Oslo?"}],
    "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}],
}
request = msgwire.read_request(openai_body, "openai")
converted = formats.convert_request(request, "anthropic")
anthropic_body = converted.dict()                 # tool_choice "required" became {"type": "any"}, ...
for loss in converted.report.entries:             # None setting drop openai's `seed` has no equivalent in anthropic
    print(loss.message, loss.kind, loss.action, loss.reason)
