"""daemon/contract/: the kinds, choices and figures every side reads are the ones the others use."""

from daemon.contract.fill import context_fill, headroom_tokens
from daemon.contract.kinds import NOTE_PREFIX, Kind
from daemon.contract.policies import CompressionPolicy, NoteKind, OnCritical, choices_of, spoken
from daemon.sections import SECTIONS
from store.kinds import TOKA_KINDS, is_activity


def test_a_kind_is_its_string() -> None:
    assert Kind.SESSION_META == "session.meta" and f"{Kind.TOOL_CALL}" == str(Kind.TOOL_CALL) == "tool.call"
    assert {Kind.USAGE: 1}.get("usage") == 1  # a member and its string are the same key


def test_the_store_s_own_kinds_are_kinds_of_the_contract() -> None:
    # The store keeps its list (it may not import the daemon); each kind or family it names is one
    # toka writes, and none of the agent's own is taken for toka's.
    families = {pattern.removesuffix(".*") for pattern in TOKA_KINDS}
    assert all(any(kind == f or kind.startswith(f + ".") for kind in Kind) for f in families)
    assert not is_activity(Kind.HANDOFF) and not is_activity(Kind.NOTE_DECISION) and not is_activity(Kind.AGENT_SPAWN)
    assert is_activity(Kind.MESSAGE) and is_activity(Kind.USAGE) and is_activity(Kind.SESSION_META)


def test_every_note_kind_is_recorded_as_a_kind_of_the_contract() -> None:
    assert {note.event_kind for note in NoteKind} == {kind for kind in Kind if kind.startswith(NOTE_PREFIX)} | {
        Kind.ERROR
    }
    assert NoteKind.ERROR.event_kind == "error" and NoteKind.TODO.event_kind == "note.todo"


def test_the_settings_offer_the_contract_s_choices() -> None:
    assert SECTIONS.allowed("policy") == ", ".join(choices_of(CompressionPolicy))
    assert SECTIONS.allowed("auto_compress") == ", ".join(("off", *choices_of(CompressionPolicy)))
    assert SECTIONS.allowed("on_critical") == ", ".join(choices_of(OnCritical))
    assert spoken(CompressionPolicy) == "fifo, window, summarize or importance"


def test_the_fill_figures() -> None:
    assert context_fill("m", 150_000, 200_000, "table") == {
        "model": "m",
        "context_tokens": 150_000,
        "context_window": 200_000,
        "window_source": "table",
        "fill_pct": 75.0,
    }
    assert context_fill(None, None, 200_000, "default")["fill_pct"] is None
    assert (headroom_tokens(250_000, 200_000), headroom_tokens(None, 200_000)) == (0, None)
