"""The audit trail's header rules, one home (``harness/audit.py``): the same trail gives the same
header in memory, in SQLite, in PostgreSQL and after ``export_audit`` / ``load_audit``; the
header is chained, so rewriting it is named by ``verify``; a trail exported before headers were
chained still reads and says it is unchained."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import msgwire
from msgwire.errors import StoreError
from msgwire.harness import Conversation
from msgwire.harness.store import open_store
from tests._support.strategies import examples

MODES = {"plan": "Plan only.", "act": "Act.", "review": "Review."}
FIXTURES = Path(__file__).parents[1] / "fixtures" / "harness"

# One step of a trail: a user message, a mode switch, a branch switch, or a mode change written
# as a raw system_control message (its audit may record a prompt, or none: the mode table's then).
steps = st.one_of(
    st.tuples(st.just("user"), st.text(min_size=1, max_size=8)),
    st.tuples(st.just("mode"), st.sampled_from([*MODES, "nowhere"])),
    st.tuples(st.just("branch"), st.sampled_from(["main", "b1", "b2"])),
    st.tuples(
        st.just("raw"),
        # no NUL: PostgreSQL's text columns refuse it (test_a_nul_in_the_header_is_refused_by_postgres)
        st.tuples(
            st.sampled_from([*MODES, "elsewhere"]),
            st.one_of(st.none(), st.text(st.characters(exclude_characters="\x00"), max_size=6)),
        ),
    ),
)


def _play(conversation: Conversation, trail: list[tuple[str, Any]]) -> None:
    for kind, value in trail:
        if kind == "user":
            conversation.add(msgwire.user(value))
        elif kind == "mode" and value in MODES:
            conversation.switch_mode(value, by="test")
        elif kind == "branch":
            conversation.switch_branch(value)
        elif kind == "raw":
            mode, prompt = value
            message = msgwire.system_control("mode_change", old=conversation.mode, new=mode)
            audit = {"system_prompt": {"old": conversation.system_prompt, "new": prompt}} if prompt is not None else {}
            conversation.add(message, "mode_change", audit)


def _state(c: Conversation) -> tuple[Any, ...]:
    return (c.mode, c.system_prompt, c.branch, c.origin)


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Any:
    server = request.getfixturevalue("pgserver")
    made = [open_store(tmp_path_factory.mktemp("header") / "s.db"), open_store(server.schema_url())]
    yield made
    for store in made:
        store.close()


@given(trail=st.lists(steps, max_size=12))
@examples(40)
def test_the_same_trail_gives_the_same_header_everywhere(stores: Any, trail: list[tuple[str, Any]]) -> None:
    memory = Conversation(system_prompt="Plan only.", mode="plan", modes=MODES, metadata={"team": "a"})
    _play(memory, trail)
    expected = _state(memory)
    assert memory.verify()
    loaded = Conversation.load_audit(memory.export_audit())
    assert _state(loaded) == expected
    assert loaded == memory
    assert loaded.verify()
    lines = Conversation.load_audit(memory.export_audit(format="jsonl"))
    assert _state(lines) == expected
    for store in stores:
        bound = store.create(system_prompt="Plan only.", mode="plan", modes=MODES, metadata={"team": "a"})
        _play(bound, trail)
        assert _state(bound) == expected  # the store sealed every entry by the same rule
        again = store.load(bound.id)
        assert _state(again) == expected
        info = store.info(bound.id)
        assert (info.mode, info.system_prompt, info.branch) == expected[:3]
        assert again.verify()
        exported = Conversation.load_audit(store.export_audit(bound.id))
        assert _state(exported) == expected
        assert exported.verify()
        imported = store.import_audit(memory.export_audit())
        assert _state(store.load(imported.id)) == expected


def _exported() -> tuple[Conversation, dict[str, Any]]:
    c = Conversation(system_prompt="Never delete files.", modes={"a": "A", "b": "B"}, metadata={"owner": "alice"})
    c.add(msgwire.user("hi"))
    c.switch_mode("b")
    c.add(msgwire.assistant("hello"))
    return c, json.loads(c.export_audit())


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("system_prompt", "Delete everything."),
        ("modes", {"a": "A", "b": "Delete everything."}),
        ("metadata", {"owner": "mallory"}),
        ("conversation_id", "someone-else"),
        ("created_at", "2020-01-01T00:00:00Z"),
        ("parent", {"conversation_id": "x"}),
        ("mode", "a"),
        ("branch", "other"),
    ],
)
def test_a_rewritten_header_fails_verification_naming_the_header(field: str, value: Any) -> None:
    _, doc = _exported()
    assert Conversation.load_audit(json.dumps(doc).encode()).verify()
    doc[field] = value
    result = Conversation.load_audit(json.dumps(doc).encode()).verify()
    assert not result
    assert (result.problem, result.seq) == ("header", 0)
    assert "header" in result.detail


def test_the_header_of_an_append_only_log_is_checked_too() -> None:
    c, _ = _exported()
    lines = c.export_audit(format="jsonl").split(b"\n")
    header = json.loads(lines[0])
    header["system_prompt"] = "Delete everything."
    tampered = b"\n".join([json.dumps(header).encode(), *lines[1:]])
    assert Conversation.load_audit(tampered).verify().problem == "header"


def test_a_fork_chains_its_own_header_after_the_entries_it_kept() -> None:
    c, _ = _exported()
    fork = c.fork(at=c.entries[1].id)
    fork.add(msgwire.user("on the fork"))
    doc = json.loads(fork.export_audit())
    assert [link["at"] for link in doc["chain"]] == [0, 2]
    assert Conversation.load_audit(json.dumps(doc).encode()).verify()
    doc["parent"]["hash"] = "0" * 64
    result = Conversation.load_audit(json.dumps(doc).encode()).verify()
    assert (result.problem, result.seq) == ("header", 2)
    assert fork.fork().verify()  # a fork of a fork: both links


def test_a_trail_written_before_headers_were_chained_reads_and_says_so() -> None:
    """A version 1 export (provenance: tests/fixtures/harness/PROVENANCE.md) verifies entry by entry;
    its header is reported unchained, and stays so when it is exported again."""
    data = (FIXTURES / "audit-v1.json").read_bytes()
    old = Conversation.load_audit(data)
    result = old.verify()
    assert result
    assert result.header == "unchained"
    assert json.loads(old.export_audit())["version"] == 1
    old.add(msgwire.user("appended later"))
    assert old.verify()


def test_documents_that_are_no_audit_trail_are_refused() -> None:
    for document in (b"{}", b'{"hello": 1}'):
        with pytest.raises(msgwire.DecodeError, match="not an audit trail"):
            Conversation.load_audit(document)
    with pytest.raises(msgwire.DecodeError, match="newer msgwire"):
        Conversation.load_audit(b'{"version": 3, "conversation_id": "c", "entries": []}')


def test_load_audit_reads_the_path_forms_export_audit_writes(tmp_path: Path) -> None:
    c, _ = _exported()
    c.export_audit(str(tmp_path / "a.json"))
    assert Conversation.load_audit(str(tmp_path / "a.json")) == c
    assert Conversation.load_audit(c.export_audit().decode()) == c
    with pytest.raises(FileNotFoundError, match=r"no\.json"):
        Conversation.load_audit(str(tmp_path / "no.json"))


def test_switching_to_the_mode_in_force_records_nothing() -> None:
    c = Conversation(modes={"a": "A", "b": "B"}, mode="a")
    assert c.switch_mode("a") is None
    assert len(c) == 0
    assert c.switch_mode("b") is not None
    assert [e.decision for e in c.entries] == ["mode_change"]


def test_the_header_rule_prefers_the_recorded_prompt_over_the_mode_table() -> None:
    """The two copies of the rule disagreed (memory: the mode table; a store: the prompt the
    entry recorded). The documented rule is the trail's: the chained entry's recorded prompt."""
    c = Conversation(modes={"a": "A", "b": "B"}, mode="a")
    change = msgwire.system_control("mode_change", old="a", new="b")
    c.add(change, "mode_change", {"system_prompt": {"old": "A", "new": "B, as it was then"}})
    assert c.system_prompt == "B, as it was then"
    doc = json.loads(c.export_audit())
    doc["modes"]["b"] = "B, edited later"
    loaded = Conversation.load_audit(json.dumps(doc).encode())
    assert loaded.system_prompt == "B, as it was then"  # the chained entry's, not the table's
    assert loaded.verify().problem == "header"  # and the edit shows


def test_a_nul_in_the_header_is_refused_by_postgres_and_nothing_is_lost(stores: Any) -> None:
    """Messages are stored as bytes and keep any character; the header's texts are text columns,
    which PostgreSQL refuses NUL in: a clear StoreError, nothing stored, the conversation intact."""
    sqlite, postgres = stores
    for store in stores:
        bound = store.create(system_prompt="Plan only.", mode="plan", modes=MODES)
        bound.add(msgwire.user("a\x00b"))  # in a message: kept by both
        message = msgwire.system_control("mode_change", old="plan", new="plan")
        audit = {"system_prompt": {"old": "Plan only.", "new": "x\x00y"}}
        if store is postgres:
            with pytest.raises(StoreError, match=r"cannot store the character NUL .*nothing was stored"):
                bound.add(message, "mode_change", audit)
            assert bound.system_prompt == "Plan only."
        else:
            bound.add(message, "mode_change", audit)
            assert bound.system_prompt == "x\x00y"
        reopened = store.open(bound.id)
        assert reopened.system_prompt == bound.system_prompt
        assert reopened.messages()[0].text == "a\x00b"
        assert reopened.verify()
    assert sqlite is not postgres
