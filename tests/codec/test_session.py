"""Session helpers: append, clone (a fork sharing nothing mutable), messages_for_model."""

from __future__ import annotations

import copy
import datetime as dt

import msgspec
from hypothesis import given

import msgwire
from msgwire import Session, TextBlock, UnknownMessage
from tests._support.strategies import examples, sessions

T0 = dt.datetime(2020, 1, 1, tzinfo=dt.UTC)


def test_append_adds_at_the_end_moves_updated_at_and_chains() -> None:
    session = Session(created_at=T0, updated_at=T0)
    first, second = msgwire.user("a"), msgwire.assistant("b")
    assert session.append(first).append(second) is session
    assert session.messages == [first, second]
    assert session.updated_at > T0
    assert session.created_at == T0


def test_clone_is_a_fork_with_a_new_id() -> None:
    session = Session(system_prompt="p", metadata={"tags": ["a"]}, created_at=T0, updated_at=T0)
    session.append(msgwire.user("hi"), msgwire.system_control("mode_change", old={"m": "plan"}))
    fork = session.clone()
    assert fork.id != session.id
    assert (fork.system_prompt, fork.created_at, fork.updated_at) == ("p", session.created_at, session.updated_at)
    assert fork.messages == session.messages
    assert session.clone(new_id=False) == session


def test_clone_shares_nothing_mutable() -> None:
    session = Session(metadata={"tags": ["a"]})
    session.append(msgwire.user("hi"), msgwire.system_control("mode_change", old={"m": "plan"}))
    before = copy.deepcopy(session)
    fork = session.clone(new_id=False)
    fork.append(msgwire.user("only in the fork"))
    fork.metadata["tags"].append("b")
    fork.messages[0].content.append(TextBlock(text="leak?"))  # frozen Structs still hold lists
    fork.messages[1].params["old"]["m"] = "act"
    assert session == before


@examples(40)
@given(sessions)
def test_clone_equals_the_original_but_for_its_id(session: Session) -> None:
    fork = session.clone()
    assert fork.id != session.id
    assert msgspec.structs.replace(fork, id=session.id) == session
    assert session.clone(new_id=False) == session


def test_messages_for_model_leaves_out_system_control_and_unknown_messages() -> None:
    user, reply = msgwire.user("hi"), msgwire.assistant("yo")
    result = msgwire.tool_result("c", "42")
    session = Session().append(
        user,
        msgwire.system_control("mode_change", old="plan", new="act"),
        reply,
        UnknownMessage(b'{"type":"hologram"}', "hologram"),
        result,
    )
    assert session.messages_for_model() == [user, reply, result]
    assert len(session.messages) == 5  # still recorded in the history
