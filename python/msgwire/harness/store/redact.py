"""A store location without its password, for everything msgwire shows: ``store.url``,
``repr(store)``, error messages, the command line's hints.

Pure Python (no psycopg), so that a location is shown safely even where the driver is missing.
Both forms libpq reads are covered: a URL (``postgresql://user:secret@host/db``, and
``?password=secret`` among its parameters) and a keyword string (``host=h password=secret``,
quoted values included). ``sslpassword`` (the client key's) counts as a password too. Everything
else is kept as it was written, so the text still names the same database, server and options.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Callable

__all__ = ["redacted", "redacted_conninfo", "scrubbed", "secrets_in"]

_SECRET_KEYS = frozenset({"password", "sslpassword"})
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
# One key = value pair as libpq reads it: the value quoted ('...' with backslash escapes; an
# unterminated quote runs to the end) or unquoted up to the next whitespace.
_PAIR = re.compile(r"(\s*)([^\s=]+)(\s*=\s*)('(?:[^'\\]|\\.)*(?:'|\Z)|(?:[^\s\\]|\\.)*)", re.DOTALL)
_HIDDEN = "***"


def redacted(location: str) -> str:
    """A store location as ``open_store`` reads it (a URL, else a SQLite path, shown as it is)
    with every password left out of a URL (the rest as written)."""
    return _split_url(location)[0] if _URL.match(location) else location


def redacted_conninfo(conninfo: str) -> str:
    """A PostgreSQL connection string (a URL, else ``key=value`` pairs) without its passwords."""
    return _split(conninfo)[0]


def secrets_in(conninfo: str) -> list[str]:
    """The passwords a connection string holds, as written and as decoded (to scrub a message)."""
    return _split(conninfo)[1]


def scrubbed(text: str, conninfo: str) -> str:
    """``text`` (a driver's message about ``conninfo``) with each of its passwords hidden: libpq
    quotes the part of a connection string it cannot parse, which may be the password."""
    for secret in sorted(secrets_in(conninfo), key=len, reverse=True):
        text = text.replace(secret, _HIDDEN)
    return text


def _split(conninfo: str) -> tuple[str, list[str]]:
    if _URL.match(conninfo):
        return _split_url(conninfo)
    return _split_keywords(conninfo)


def _split_url(url: str) -> tuple[str, list[str]]:
    """libpq's reading: the user part ends at the first ``@`` before any ``/``; its password
    follows the first ``:``. Query parameters are ``&``-separated ``key=value`` pairs."""
    scheme_end = url.index("://") + 3
    head, rest = url[:scheme_end], url[scheme_end:]
    secrets: list[str] = []
    login_end = _first(rest, "@/")
    if login_end < len(rest) and rest[login_end] == "@":
        user, colon, password = rest[:login_end].partition(":")
        if colon:
            secrets.append(password)
            rest = (user + "@" if user else "") + rest[login_end + 1 :]
    path, question, query = rest.partition("?")
    if question:
        kept = []
        for pair in query.split("&"):
            key, _, value = pair.partition("=")
            if urllib.parse.unquote(key) in _SECRET_KEYS:
                secrets.append(value)
            else:
                kept.append(pair)
        path += ("?" + "&".join(kept)) if kept else ""
    return head + path, _with_decoded(secrets, urllib.parse.unquote)


def _split_keywords(text: str) -> tuple[str, list[str]]:
    """The pairs of a keyword string; from a part that is no pair on, the rest is dropped
    (libpq refuses the string anyway, and the rest may hold a password)."""
    kept: list[str] = []
    secrets: list[str] = []
    position = 0
    while position < len(text) and not text[position:].isspace():
        pair = _PAIR.match(text, position)
        if pair is None:
            kept.append(" ..." if kept else "...")
            break
        space, key, equals, value = pair.groups()
        if key in _SECRET_KEYS:
            secrets.append(value)
        else:
            kept.append(space + key + equals + value)
        position = pair.end()
    return "".join(kept).strip(), _with_decoded(secrets, _unquoted)


def _first(text: str, characters: str) -> int:
    found = [i for i in (text.find(c) for c in characters) if i >= 0]
    return min(found, default=len(text))


def _unquoted(value: str) -> str:
    """A keyword value as libpq reads it: without its quotes and backslash escapes."""
    if value.startswith("'"):
        value = value[1:-1] if len(value) > 1 and value.endswith("'") else value[1:]
    return re.sub(r"\\(.)", r"\1", value, flags=re.DOTALL)


def _with_decoded(secrets: list[str], decode: Callable[[str], str]) -> list[str]:
    found = {s for s in secrets if s}
    found |= {decoded for s in secrets if (decoded := decode(s))}
    return sorted(found)
