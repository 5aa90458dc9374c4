"""How an HTTP attempt failed, whatever library made it (``_http.py``, ``_aiohttp.py``)."""

from __future__ import annotations

__all__ = ["NetworkFailure", "RequestFailure"]


class NetworkFailure(Exception):
    """No response came (refused, reset, timed out, closed before the headers): worth sending
    again. Its ``__cause__`` is the library's exception."""


class RequestFailure(Exception):
    """The request cannot be sent as it is (an invalid URL): not worth sending again."""
