"""Adapters to other libraries, each in its own module with its library imported only there:
``msgwire.interop.pydantic_ai`` (``to_model_messages``, ``from_model_messages``) and
``msgwire.interop.openai_agents`` (``StoreSession``: openai-agents' ``Session`` on msgwire's
stores, its items read and written one by one by ``msgwire.interop.responses_items``). The
openai and anthropic SDKs' message params are the providers' request formats, read and written
by ``msgwire.from_request`` / ``to_request``.

``interop`` stands on the wire layer and the harness (an adapter may keep its history in a
store); nothing else in msgwire imports it."""
