"""A PostgreSQL password never shows: not in ``store.url``, ``repr(store)``, nor in any error
(its whole traceback, causes included), whether it was given in the URL's user part, as
``?password=``, as a ``password=`` keyword, or in a string libpq cannot read (libpq quotes the
part it cannot read). Against the tests' real server and its role that needs a password
(tests/_support/postgres.py). The command line's side: tests/cli/test_cli_sessions.py."""

from __future__ import annotations

import traceback
import urllib.parse

import pytest

from msgwire.errors import StoreError
from msgwire.harness.store import open_store, redacted
from msgwire.harness.store.postgres import PostgresStore
from msgwire.harness.store.redact import redacted_conninfo
from tests._support.postgres import PASSWORD, PASSWORD_ROLE, PostgresServer

WRONG = "Wr0ng-Secret-77"


def _everything(exc: BaseException | None) -> str:
    """What a traceback says of ``exc`` and of the exceptions it shows with it (not the source lines)."""
    said = []
    while exc is not None:
        said += [*traceback.format_exception_only(exc), repr(exc)]
        exc = exc.__cause__ if exc.__cause__ is not None or exc.__suppress_context__ else exc.__context__
    return "".join(said)


def _query_url(server: PostgresServer, password: str) -> str:
    url = server.url(user=PASSWORD_ROLE)
    return f"{url}&password={urllib.parse.quote(password, safe='')}"


def _keywords(server: PostgresServer, password: str) -> str:
    return f"host={server.socket_dir} port=5432 user={PASSWORD_ROLE} dbname=postgres password='{password}'"


FORMS = {
    "in the URL": lambda server, password: server.url(user=PASSWORD_ROLE, password=password),
    "as ?password=": _query_url,
    "as a password= keyword": _keywords,
}


@pytest.mark.parametrize("form", list(FORMS))
def test_a_wrong_password_is_in_no_error(pgserver: PostgresServer, form: str) -> None:
    conninfo = FORMS[form](pgserver, WRONG)
    with pytest.raises(StoreError) as failed:
        PostgresStore(conninfo, connect_timeout=30)
    assert f'password authentication failed for user "{PASSWORD_ROLE}"' in str(failed.value)
    assert WRONG not in _everything(failed.value)
    assert str(pgserver.socket_dir) in str(failed.value)  # the server it tried is named


@pytest.mark.parametrize("form", list(FORMS))
def test_the_right_password_opens_and_shows_nowhere(pgserver: PostgresServer, form: str) -> None:
    conninfo = FORMS[form](pgserver, PASSWORD)
    with PostgresStore(conninfo) as store:
        conversation = store.create()
        assert store.info(conversation.id).id == conversation.id
        for shown in (store.url, repr(store), str(store._pool.name)):
            assert PASSWORD not in shown
            assert PASSWORD_ROLE in shown
        with pytest.raises(KeyError) as missing:
            store.info("no-such-conversation")
        assert PASSWORD not in _everything(missing.value)
    with pytest.raises(ValueError, match="is closed") as closed:
        store.create()
    assert PASSWORD not in _everything(closed.value)


@pytest.mark.parametrize(
    ("conninfo", "secret", "words"),
    [
        ("postgresql://u:pa%zzss@h/db", "pa%zzss", "invalid percent-encoded token"),
        ("postgresql://u:pa ss@h/db", "pa ss", "unexpected spaces"),
        ("host=h password=pa-ss junk", "pa-ss", 'missing "=" after "junk"'),
        ("host=h password='pa ss", "pa ss", "unterminated quoted string"),
    ],
)
def test_a_connection_string_libpq_cannot_read_keeps_its_password_hidden(
    conninfo: str, secret: str, words: str
) -> None:
    with pytest.raises(StoreError) as failed:
        PostgresStore(conninfo)
    assert words in str(failed.value)
    assert secret not in _everything(failed.value)


def test_an_unsupported_scheme_is_refused_without_its_password() -> None:
    with pytest.raises(ValueError, match="unsupported store URL scheme 'mysql'") as refused:
        open_store("mysql://root:Hunter2-pw@db.example/app")
    assert "Hunter2-pw" not in _everything(refused.value)
    assert "mysql://root@db.example/app" in str(refused.value)


@pytest.mark.parametrize(
    ("location", "shown"),
    [
        ("postgresql://u:p@ss@h/db", "postgresql://u@ss@h/db"),  # libpq: the user part ends at the first @
        ("postgresql://u:pw@h:5432/db?sslmode=require&password=x", "postgresql://u@h:5432/db?sslmode=require"),
        ("postgres://:pw@h/db?sslpassword=k", "postgres://h/db"),
        ("postgresql:///db?host=/var/run/postgresql", "postgresql:///db?host=/var/run/postgresql"),
    ],
)
def test_redacted_leaves_out_exactly_the_password(location: str, shown: str) -> None:
    assert redacted(location) == redacted_conninfo(location) == shown


@pytest.mark.parametrize(
    ("conninfo", "shown"),
    [
        ("host=h password = 'a \\' b' port=5", "host=h port=5"),
        ("host=h options='-c password=1'", "host=h options='-c password=1'"),  # a value, not a pair
        ("host=h password=x oops", "host=h ..."),  # unreadable from there on: the rest is not shown
    ],
)
def test_a_keyword_connection_string_loses_its_password_pair(conninfo: str, shown: str) -> None:
    assert redacted_conninfo(conninfo) == shown


def test_a_path_is_shown_as_it_is() -> None:
    """``open_store`` reads what is no URL as a SQLite path: nothing in it is a password."""
    assert redacted("/home/me/my:pw@file.db") == "/home/me/my:pw@file.db"
    assert redacted("data/a=b c.db") == "data/a=b c.db"
