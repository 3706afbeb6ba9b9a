"""The file pipeline gives the same bytes however it reads and writes JSON lines: orjson or the json
module, files kept parsed between the passes or read again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pseudo_samples import documents

from pytest_soclab.pseudonymize import Pseudonymizer, jsonlines
from pytest_soclab.pseudonymize.files import pseudonymize_paths

KEY = b"files-test-key-0123456789abcdef"

# Lines where orjson and the json module read or write differently, or where only json reads.
AWKWARD = [
    '{"@timestamp":"2024-01-01T00:00:00Z","host":{"name":"web-01"},"n":123456789012345678901234567890}',
    '{"@timestamp":"2024-01-01T00:00:00Z","host":{"name":"web-01"},"n":-9223372036854775809}',
    '{"@timestamp":"2024-01-01T00:00:00Z","event":{"duration":1e-05},"source":{"ip":"10.1.2.3"}}',
    '{"@timestamp":"2024-01-01T00:00:00Z","event":{"risk":0.00002},"user":{"name":"alice"}}',
    '{"@timestamp":"2024-01-01T00:00:00Z","event":{"risk":2.5e-9},"message":"ssh alice@db-02"}',
    '{"@timestamp":"2024-01-01T00:00:00Z","event":{"risk":NaN,"x":Infinity},"host":{"name":"db-02"}}',
    '{"@timestamp":"2024-01-01T00:00:00Z","event":{"big":1e400},"message":"from 185.220.101.47"}',
    '{"@timestamp":"2024-01-01T00:00:00Z","event":{"f":1e+16,"g":0.5},"message":"size 1e-5 x"}',
    '{"index":{"_index":"logs","_id":"1"}}',
    '{"_id":"2","_source":{"@timestamp":"2024-01-01T00:00:00Z","host":{"name":"web-01"},"v":1e-06}}',
]


def _write_case(tmp_path: Path) -> Path:
    src = tmp_path / "in" / "case"
    src.mkdir(parents=True)
    lines = [json.dumps(d) for d in documents()] + AWKWARD
    (src / "events.ndjson").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (src / "hits.json").write_text(json.dumps([json.loads(x) for x in lines[:5]], indent=2), encoding="utf-8")
    return src


def _outputs(out: Path) -> dict[str, bytes]:
    return {str(f.relative_to(out)): f.read_bytes() for f in sorted(out.rglob("*")) if f.is_file()}


@pytest.mark.parametrize("retain", [0, 300, 10**9])
def test_same_bytes_with_or_without_orjson_kept_or_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, retain: int
) -> None:
    src = _write_case(tmp_path)
    monkeypatch.setattr(jsonlines, "orjson", None)
    pseudonymize_paths([src], tmp_path / "ref", Pseudonymizer(KEY), retain_chars=0)
    monkeypatch.undo()
    pseudonymize_paths([src], tmp_path / "out", Pseudonymizer(KEY), retain_chars=retain)
    assert _outputs(tmp_path / "out") == _outputs(tmp_path / "ref")


def test_awkward_numbers_written_as_json_writes_them(tmp_path: Path) -> None:
    src = _write_case(tmp_path)
    pseudonymize_paths([src], tmp_path / "out", Pseudonymizer(KEY))
    text = next((tmp_path / "out").rglob("events.ndjson")).read_text(encoding="utf-8")
    for token in ("123456789012345678901234567890", "-9223372036854775809", "1e-05", "2e-05", "2.5e-09",
                  "NaN", "Infinity", "1e+16", "1e-06"):
        assert token in text
