"""docs/json.md documents the `--json` shapes with an example of each; daemon/contract/results*.py
declares them. Each documented example names exactly the keys its TypedDict declares, nested
objects included (a key the type leaves NotRequired may be left out, and an object the example
elides, `{…}` or with a `"...": "..."` entry, is not held to every key), so a field added on one
side and not the other fails."""

import types
import typing
from dataclasses import dataclass, field
from typing import Any, get_args, get_origin, get_type_hints

import pytest
from cli_support import ROOT

from daemon.contract import results, results_cost, results_heads, results_otel, results_status, results_upkeep

# Each documented example, by its section's heading and its place among the section's examples,
# with the type that declares it. Examples not listed (config, doctor, integrate, alerts, the
# handoff document) are documents no TypedDict declares.
DOCUMENTED: dict[tuple[str, int], Any] = {
    ("Event", 0): results.Event,
    ("`toka sessions --json`", 0): results.SessionList,
    ("`toka show SESSION --json`: SESSION", 0): results.Session,
    ("`toka status --json`", 0): results_status.Status,
    ("`toka verify [SESSION] --json`", 0): results_upkeep.VerifyReport,
    ("`toka verify [SESSION] --json`", 1): results_upkeep.DatabaseCheck,
    ("`toka verify [SESSION] --json`", 2): results_heads.HeadsCheck,
    ("`toka proof EVENT --json`", 0): results_heads.InclusionProof,
    ("`toka heads --reset --yes --json`", 0): results_heads.HeadsReset,
    ("`toka usage SESSION --json`, `toka usage AGENT --json`", 0): results.Usage,
    ("`toka report daily|weekly|monthly --json`", 0): results_cost.Report,
    ("`toka report session --json`", 0): results_cost.SessionRow,
    ("`toka report blocks --json`", 0): results_cost.BlockRow,
    ("`toka report blocks --live --json`", 0): results_cost.LiveSummary,
    ("`toka agent show AGENT --json` (and `spawn`, `pause`, `resume`, `terminate`, `usage`)", 0): results.Agent,
    ("`toka handoff list --json` (and `chain`, `stats`, `verify`)", 0): results.HandoffList,
    ("`toka stats --json`", 0): results.Stats,
    ("`toka note TARGET KIND TEXT --json`", 0): results.Noted,
    ("`toka import ... --json`", 0): results_upkeep.ImportReport,
    ("`toka export otel --json`", 0): results_otel.OtelExport,
    ("`toka search QUERY --json`", 0): results.SearchResult,
    ("`toka recall QUERY --session S --json`", 0): results.Recall,
    ("`toka admin recover --json`", 0): results_upkeep.Recovery,
    ("`toka admin copy --to URL --json`", 0): results_upkeep.CopyReport,
    ("`toka compress SESSION --json`", 0): results.Compression,
    ("`toka context SESSION --json`", 0): results.WorkingContext,
    ("`toka memory get SCOPE KEY --json` (and `set`, `list`)", 0): results.MemoryEntry,
}
ELISIONS = ("...", "…")


def documented_examples() -> dict[tuple[str, int], str]:
    """Each ```json block of docs/json.md, by its section's heading and its place in the section."""
    examples: dict[tuple[str, int], str] = {}
    heading, block = "", None
    for line in (ROOT / "docs" / "json.md").read_text(encoding="utf-8").splitlines():
        if block is not None:
            if line.strip() == "```":
                examples[(heading, sum(1 for h, _ in examples if h == heading))] = "\n".join(block)
                block = None
            else:
                block.append(line)
        elif line.startswith("## "):
            heading = line[3:]
        elif line.strip() == "```json":
            block = []
    return examples


@dataclass
class Documented:
    """An object of an example: its keys with their values, and whether it elides some keys."""

    keys: dict[str, Any] = field(default_factory=dict)
    elided: bool = False


class Example:
    """An example read as the docs write it: JSON whose values may be elided (`…`, `{…}`,
    `"...": "..."`), or a fragment (`"database": {...}`), whose value is what it documents.
    Objects become :class:`Documented`, lists lists, and anything else its text."""

    def __init__(self, text: str) -> None:
        self.text, self.at = text, 0

    def read(self) -> Any:
        self._space()
        if self.text[self.at] == '"':  # a fragment
            self._string()
            self._space()
            self.at += 1  # the colon
        return self._value()

    def _space(self) -> None:
        while self.at < len(self.text) and self.text[self.at].isspace():
            self.at += 1

    def _string(self) -> str:
        end = self.at + 1
        while self.text[end] != '"':
            end += 2 if self.text[end] == "\\" else 1
        found, self.at = self.text[self.at + 1 : end], end + 1
        return found

    def _scalar(self) -> str:
        start = self.at
        while self.at < len(self.text) and self.text[self.at] not in ",}]\n":
            self.at += 1
        return self.text[start : self.at].strip()

    def _value(self) -> Any:
        self._space()
        opening = self.text[self.at]
        if opening == '"':
            return self._string()
        if opening not in "{[":
            return self._scalar()
        self.at += 1
        closing = "}" if opening == "{" else "]"
        items: list[Any] = []
        documented = Documented()
        while True:
            self._space()
            char = self.text[self.at]
            if char == closing:
                self.at += 1
                return documented if opening == "{" else items
            if char == ",":
                self.at += 1
            elif opening == "[":
                items.append(self._value())
            elif char == '"':
                key = self._string()
                self._space()
                self.at += 1  # the colon
                value = self._value()
                if key in ELISIONS:
                    documented.elided = True
                else:
                    documented.keys[key] = value
            else:  # `{…}`
                documented.elided = documented.elided or self._scalar() in ELISIONS


def _options(kind: Any) -> list[Any]:
    return list(get_args(kind)) if get_origin(kind) in (typing.Union, types.UnionType) else [kind]


def mismatches(documented: Any, kind: Any, where: str) -> list[str]:
    """Where the documented object names a key ``kind`` does not declare or leaves out one it
    requires, its nested objects and lists of objects included."""
    if not isinstance(documented, Documented):
        return []
    declared = get_type_hints(kind)
    found = [f"{where}.{key}: documented, not declared by {kind.__name__}" for key in documented.keys - declared.keys()]
    if not documented.elided and documented.keys:
        missing = sorted(kind.__required_keys__ - documented.keys.keys())
        found += [f"{where}.{key}: declared by {kind.__name__}, not documented" for key in missing]
    for key, value in documented.keys.items():
        if isinstance(value, list):
            items = [(item, f"{where}.{key}[{n}]") for n, item in enumerate(value)]
            kinds = [get_args(option)[0] for option in _options(declared.get(key)) if get_origin(option) is list]
        else:
            items, kinds = [(value, f"{where}.{key}")], _options(declared.get(key))
        kinds = [kind for kind in kinds for kind in _options(kind) if typing.is_typeddict(kind)]
        for item, place in items if kinds else ():
            # Of a union (a report's rows are periods, sessions or blocks), the type it fits best.
            found += min((mismatches(item, kind, place) for kind in kinds), key=len)
    return found


def test_the_reader_takes_the_docs_elisions() -> None:
    example = Example('{"a": 1, "b": {"c": "x: y"}, "d": [{…}, {"e": 2, "...": "..."}], "f": "q\\"r", "g": …}').read()
    assert list(example.keys) == ["a", "b", "d", "f", "g"] and not example.elided
    assert example.keys["b"].keys == {"c": "x: y"}
    first, second = example.keys["d"]
    assert (first.keys, first.elided, second.keys, second.elided) == ({}, True, {"e": "2"}, True)
    assert Example('"database": {"check": "quick_check", "ok": true}').read().keys == {
        "check": "quick_check",
        "ok": "true",
    }


def test_the_check_sees_a_key_on_one_side_only() -> None:
    noted = '{"session": "s", "agent": "a", "kind": "note.todo", "seq": 1, "id": "…", "created": true}'
    assert mismatches(Example(noted).read(), results.Noted, "note") == []
    assert mismatches(Example(noted.replace('"seq"', '"colour"')).read(), results.Noted, "note") == [
        "note.colour: documented, not declared by Noted",
        "note.seq: declared by Noted, not documented",
    ]
    nested = '{"sessions": [{"session": "s", "colour": 1, "...": "..."}]}'
    assert mismatches(Example(nested).read(), results.SessionList, "list") == [
        "list.sessions[0].colour: documented, not declared by Session"
    ]


def test_every_example_listed_is_in_the_docs() -> None:
    assert set(DOCUMENTED) <= set(documented_examples())


@pytest.mark.parametrize("place", sorted(DOCUMENTED), ids=lambda place: f"{place[0]}#{place[1]}")
def test_the_documented_keys_are_the_declared_keys(place: tuple[str, int]) -> None:
    documented = Example(documented_examples()[place]).read()
    assert isinstance(documented, Documented) and documented.keys
    assert mismatches(documented, DOCUMENTED[place], place[0]) == []
