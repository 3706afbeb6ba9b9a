"""Property tests: malformed lines never stop an import, every good line is counted, every bad one is
reported with its line number."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from importers_testlib import SYSMON, nxlog

from pytest_soclab.importers import import_files

GOOD_WINDOWS = st.builds(
    lambda eid, pid, img: json.dumps(nxlog(SYSMON, eid, ProcessId=str(pid), Image=img)),
    st.sampled_from([1, 3, 5, 11, 22, 4242]),
    st.integers(0, 2**31),
    st.text(min_size=0, max_size=20),
)
BAD = st.one_of(
    st.text(min_size=1, max_size=40).filter(lambda t: t.strip() and "\n" not in t and "\r" not in t),
    st.builds(json.dumps, st.lists(st.integers(), max_size=3)),
    st.just('{"Channel": "Security"}'),
    st.just('{"Channel": "Security", "EventID": "four"}'),
    st.binary(min_size=1, max_size=20).filter(lambda b: b"\n" not in b and b"\r" not in b and b.strip()),
)
ZEEK_HEADER = "#separator \\x09\n#fields\tts\tuid\tid.orig_h\tid.orig_p\n#types\ttime\tstring\taddr\tport\n"
GOOD_ZEEK = st.builds(lambda ts, port: f"{ts}\tC1\t10.0.0.1\t{port}", st.integers(0, 2**31), st.integers(0, 65535))
BAD_ZEEK = st.one_of(
    st.builds(lambda n: "\t".join(["x"] * n), st.integers(1, 8).filter(lambda n: n != 4)),
    st.just("notatime\tC1\t10.0.0.1\t1"),
    st.just("1.0\tC1\t10.0.0.1\tport"),
)


def _bad_json(line: str | bytes) -> bool:
    if isinstance(line, bytes):
        return True
    try:
        obj = json.loads(line)
    except ValueError:
        return True
    return not (isinstance(obj, dict) and "Channel" in obj and str(obj.get("EventID", "")).isdigit())


def _check(kind: str, header: str, lines: list[tuple[bool, str | bytes]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "in.log"
        body = b"".join((x.encode() if isinstance(x, str) else x) + b"\n" for _, x in lines)
        src.write_bytes(header.encode() + body)
        summary = import_files(kind, [src], Path(tmp) / "out")
        offset = header.count("\n")
        bad_lines = [offset + i + 1 for i, (good, _) in enumerate(lines) if not good]
        assert summary.events == sum(1 for good, _ in lines if good)
        assert [m.line for m in summary.malformed] == bad_lines
        assert sum(summary.streams.values()) == summary.events
        assert all(m.reason for m in summary.malformed)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(GOOD_WINDOWS.map(lambda x: (True, x)), BAD.map(lambda x: (not _bad_json(x), x))),
                min_size=1, max_size=25))  # fmt: skip
def test_windows_lines(lines: list[tuple[bool, str | bytes]]) -> None:
    first = lines[0][1]
    if "\x00" in (first.decode("latin-1") if isinstance(first, bytes) else first):
        lines = [(True, json.dumps(nxlog(SYSMON, 1))), *lines]  # a NUL in the first line: skipped as binary data
    _check("windows", "", lines)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(GOOD_ZEEK.map(lambda x: (True, x)), BAD_ZEEK.map(lambda x: (False, x))), min_size=1, max_size=25))
def test_zeek_tsv_lines(lines: list[tuple[bool, str]]) -> None:
    _check("zeek", ZEEK_HEADER, lines)


FIELD_NAMES = st.from_regex(r"[A-Z][A-Za-z]{1,12}", fullmatch=True)
# A value's continuation lines never look like a field of their own ("Word: ..."), as in a script.
VALUE_LINES = st.lists(st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=30)
                       .filter(lambda t: not re.match(r"[A-Z][A-Za-z]*:(?: |$)", t)), min_size=1, max_size=3)


@given(st.dictionaries(FIELD_NAMES, VALUE_LINES, min_size=1, max_size=6))
def test_sysmon_message_fields_round_trip(fields: dict[str, list[str]]) -> None:
    """Sysmon's rendered message (a description, then `Key: Value` lines) gives its fields back."""
    from pytest_soclab.importers.sysmon import message_fields

    message = "Something detected:\r\n" + "\r\n".join(f"{k}: " + "\n".join(v) for k, v in fields.items())
    got = message_fields(message)
    assert got == {k: "\n".join(v) for k, v in fields.items()}
