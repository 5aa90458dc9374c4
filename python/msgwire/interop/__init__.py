"""Conversions to and from other libraries' message types, each in its own module with its
library imported only there: ``msgwire.interop.pydantic_ai`` (``to_model_messages``,
``from_model_messages``). The openai and anthropic SDKs' message params are the providers'
request formats, read and written by ``msgwire.from_request`` / ``to_request``."""
