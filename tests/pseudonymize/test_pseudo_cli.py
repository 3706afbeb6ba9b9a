"""`soclab pseudonymize`: a whole release (corpus, task, evidence, transcript, results, report) in one run."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest
from pseudo_samples import ATTACKER_IP, IPS, NAME_TOKENS, SHA256, documents, task

from pytest_soclab.cli import main
from pytest_soclab.models.task import Task
from pytest_soclab.pseudonymize import KEY_ENV_VAR
from pytest_soclab.pseudonymize.files import MANIFEST_NAME


def _release(root: Path) -> list[Path]:
    """A case directory, a task, a run's transcript and results, the way soclab lays them out."""
    docs = documents()
    case = root / "corpus" / "case-01-recon"
    case.mkdir(parents=True)
    (case / "events.ndjson").write_text("".join(json.dumps(d) + "\n" for d in docs[:8]), encoding="utf-8")
    bulk = "".join(
        json.dumps({"create": {"_index": "logs-endpoint.events.process-default", "_id": f"d{i}"}})
        + "\n"
        + json.dumps(d)
        + "\n"
        for i, d in enumerate(docs[8:])
    )
    with gzip.open(case / "bulk.ndjson.gz", "wt", encoding="utf-8") as fh:
        fh.write(bulk)
    evidence = {
        "format": 1,
        "task": "task-01",
        "case": "case-01-recon",
        "evidence": [
            {
                "source": "logs-system.auth",
                "must_find": f"Accepted publickey for alice from {ATTACKER_IP}",
                "index": "logs-system.auth,logs-system.auth-*",
                "candidates": 1,
                "documents": [
                    {
                        "_index": ".ds-logs-system.auth-default-2024.05.01-000001",
                        "_id": "x1",
                        "_source": docs[3],
                    }
                ],
            }
        ],
    }
    (case / "evidence.json").write_text(json.dumps(evidence, indent=2), encoding="utf-8")
    tasks = root / "tasks"
    tasks.mkdir()
    (tasks / "task-01.json").write_text(json.dumps(task(), indent=2), encoding="utf-8")
    runs = root / "runs"
    runs.mkdir()
    calls = [
        {
            "seq": 1,
            "tool": "esql_query",
            "args": {"query": 'FROM logs-* | WHERE host.name == "web-01" | STATS n = COUNT(*) BY source.ip'},
            "result": {
                "columns": [{"name": "n", "type": "long"}, {"name": "source.ip", "type": "ip"}],
                "values": [[3, "10.20.1.15"], [1, ATTACKER_IP]],
            },
        },
        {
            "seq": 2,
            "tool": "es_search",
            "args": {"index": "logs-system.auth-*", "body": {"query": {"term": {"user.name": "alice"}}}},
            "result": {
                "hits": {"hits": [{"_index": "logs-system.auth-default", "_id": "x1", "_source": docs[3]}]}
            },
            "new_entities": {"hosts": ["web-01"], "ips": [ATTACKER_IP], "users": ["alice"], "pids": [901]},
        },
        {
            "seq": 3,
            "tool": "isolate_host",
            "args": {"host": "web-01", "comment": "C2 from update-check.evil-c2.xyz"},
            "decision": {"allow": True, "reasons": ["host web-01 is tier 2"]},
        },
    ]
    (runs / "transcript.jsonl").write_text("".join(json.dumps(c) + "\n" for c in calls), encoding="utf-8")
    report = (
        f"# web-01 compromised\n\nalice's key was used from {ATTACKER_IP}; loader fetched from "
        "http://update-check.evil-c2.xyz/stage2.sh into /home/alice/.cache/.sysupdate "
        f"(sha256 {SHA256}). ATT&CK T1105.\n"
    )
    results = {
        "schema_version": 1,
        "items": [
            {
                "nodeid": "tasks/task-01.json::task-01[protected]",
                "scenario_id": "task-01",
                "report": report,
                "transcript": calls,
                "checkpoints": [
                    {"index": 0, "check": "found web-01", "justification": "report names web-01"}
                ],
            }
        ],
    }
    (runs / "results.json").write_text(json.dumps(results), encoding="utf-8")
    (runs / "report.md").write_text(report, encoding="utf-8")
    (runs / "web-01-notes.txt").write_text("alice on web-01 talked to 185.220.101.47\n", encoding="utf-8")
    return [root / "corpus", tasks, runs]


def _read_all(out: Path) -> dict[str, bytes]:
    files = {}
    for f in sorted(out.rglob("*")):
        if f.is_file():
            data = f.read_bytes()
            files[f.relative_to(out).as_posix()] = gzip.decompress(data) if f.name.endswith(".gz") else data
    return files


def _keyfile(tmp_path: Path, name: str = "k.key", secret: str = "a-long-enough-secret-for-tests-1") -> Path:
    k = tmp_path / name
    k.write_text(secret + "\n", encoding="utf-8")
    return k


def _run(args: list[str]) -> int:
    return main(["pseudonymize", *args])


@pytest.fixture
def inputs(tmp_path: Path) -> list[Path]:
    return _release(tmp_path / "in")


def test_a_release_is_pseudonymized_with_nothing_left(
    tmp_path: Path, inputs: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert _run([*map(str, inputs), "--out", str(out), "--key-file", str(_keyfile(tmp_path))]) == 0
    assert "pseudonymized 8 file(s)" in capsys.readouterr().out
    files = _read_all(out)
    assert MANIFEST_NAME in files
    blob = b"\n".join(files.values()).decode("utf-8").lower() + "\n".join(files).lower()
    leaked = [o for o in NAME_TOKENS if re.search(rf"(?<![\w.-]){re.escape(o)}(?![\w-])", blob)]
    assert leaked == []
    assert [ip for ip in IPS if re.search(rf"(?<![\w.:]){re.escape(ip)}(?![\w:]|\.\d)", blob)] == []
    assert SHA256 in blob and "t1105" in blob
    # the layout is kept, the file name with a host name in it is not
    assert "corpus/case-01-recon/events.ndjson" in files and "tasks/task-01.json" in files
    assert not any("web-01" in name for name in files) and any(name.endswith("-notes.txt") for name in files)
    Task.model_validate(json.loads(files["tasks/task-01.json"]))
    bulk_lines = files["corpus/case-01-recon/bulk.ndjson.gz"].decode().splitlines()
    assert json.loads(bulk_lines[0]) == {
        "create": {"_index": "logs-endpoint.events.process-default", "_id": "d0"}
    }
    manifest = json.loads(files[MANIFEST_NAME])
    assert manifest["key_id"] and len(manifest["files"]) == 8 and manifest["names_learned"] >= 10


def _consistent_values(files: dict[str, bytes]) -> set[str]:
    """The pseudonym of host web-01 as seen in each kind of file must be one and the same."""
    corpus = [json.loads(line) for line in files["corpus/case-01-recon/events.ndjson"].splitlines()]
    t = json.loads(files["tasks/task-01.json"])
    transcript = [json.loads(line) for line in files["runs/transcript.jsonl"].splitlines()]
    evidence = json.loads(files["corpus/case-01-recon/evidence.json"])
    return {
        corpus[0]["host"]["name"],
        t["ground_truth"]["implicated_hosts"][0],
        transcript[2]["args"]["host"],
        evidence["evidence"][0]["documents"][0]["_source"]["host"]["name"],
        next(iter(transcript[1]["new_entities"]["hosts"])),
    }


def test_the_same_entity_has_one_pseudonym_across_files(tmp_path: Path, inputs: list[Path]) -> None:
    out = tmp_path / "out"
    _run([*map(str, inputs), "--out", str(out), "--key-file", str(_keyfile(tmp_path))])
    files = _read_all(out)
    values = _consistent_values(files)
    assert len(values) == 1 and "web-01" not in values
    (host,) = values
    transcript = [json.loads(line) for line in files["runs/transcript.jsonl"].splitlines()]
    assert f'host.name == "{host}"' in transcript[0]["args"]["query"]
    ips = [row[1] for row in transcript[0]["result"]["values"]]
    corpus = [json.loads(line) for line in files["corpus/case-01-recon/events.ndjson"].splitlines()]
    assert ips == [corpus[1]["source"]["ip"], corpus[1]["destination"]["ip"]]


def test_byte_identical_with_the_same_key_and_unlinkable_with_another(
    tmp_path: Path, inputs: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    key = _keyfile(tmp_path)
    _run([*map(str, inputs), "--out", str(tmp_path / "a"), "--key-file", str(key)])
    # the same secret from the environment, inputs in another order
    monkeypatch.setenv(KEY_ENV_VAR, "a-long-enough-secret-for-tests-1")
    _run([*map(str, reversed(inputs)), "--out", str(tmp_path / "b")])
    _run(
        [
            *map(str, inputs),
            "--out",
            str(tmp_path / "c"),
            "--key-file",
            str(_keyfile(tmp_path, "o", "x" * 40)),
        ]
    )
    a, b, c = _read_all(tmp_path / "a"), _read_all(tmp_path / "b"), _read_all(tmp_path / "c")
    assert a.keys() == b.keys()
    assert all(a[k] == b[k] for k in a if k != MANIFEST_NAME)
    host_a, host_c = _consistent_values(a).pop(), _consistent_values(c).pop()
    assert host_a != host_c and host_a.lower() not in b"".join(c.values()).decode().lower()


def test_refuses_without_a_key(
    tmp_path: Path, inputs: list[Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(KEY_ENV_VAR, raising=False)
    out = tmp_path / "out"
    assert _run([*map(str, inputs), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "no pseudonymization key" in err and KEY_ENV_VAR in err and "Traceback" not in err
    assert not out.exists()
    monkeypatch.setenv(KEY_ENV_VAR, "short")
    assert _run([*map(str, inputs), "--out", str(out)]) == 2
    assert "at least 16 bytes" in capsys.readouterr().err
    assert _run([*map(str, inputs), "--out", str(out), "--key-file", str(tmp_path / "missing.key")]) == 2
    assert "cannot read" in capsys.readouterr().err
    assert not out.exists()


def test_refuses_to_write_inside_its_input_and_unsupported_files(
    tmp_path: Path, inputs: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    key = str(_keyfile(tmp_path))
    assert _run([str(inputs[0]), "--out", str(inputs[0] / "pseudo"), "--key-file", key]) == 2
    assert "inside the input" in capsys.readouterr().err
    (inputs[0] / "case-01-recon" / "cache.parquet").write_bytes(b"PAR1...")
    assert _run([str(inputs[0]), "--out", str(tmp_path / "o1"), "--key-file", key]) == 2
    assert "cache.parquet" in capsys.readouterr().err
    assert _run([str(inputs[0]), "--out", str(tmp_path / "o2"), "--key-file", key, "--skip-unsupported"]) == 0
    assert not list((tmp_path / "o2").rglob("*.parquet"))


def test_a_bad_json_line_is_reported_with_its_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.ndjson"
    bad.write_text('{"host": {"name": "a"}}\n{"host": \n', encoding="utf-8")
    assert _run([str(bad), "--out", str(tmp_path / "o"), "--key-file", str(_keyfile(tmp_path))]) == 2
    assert "bad.ndjson:2: not a JSON line" in capsys.readouterr().err


def test_options_reach_the_output(tmp_path: Path, inputs: list[Path]) -> None:
    out = tmp_path / "out"
    _run(
        [
            str(inputs[0]),
            "--out",
            str(out),
            "--key-file",
            str(_keyfile(tmp_path)),
            "--no-keep-special-ranges",
            "--drop-geo",
            "--keep-domain",
            "evil-c2.xyz",
            "--keep-user",
            "alice",
        ]
    )
    files = _read_all(out)
    events = [json.loads(line) for line in files["corpus/case-01-recon/events.ndjson"].splitlines()]
    assert "geo" not in events[1]["destination"]
    assert events[0]["user"]["name"] == "alice"
    assert events[0]["process"]["command_line"].split("//")[1].split("/")[0].endswith(".evil-c2.xyz")
    assert not events[1]["source"]["ip"].startswith("10.")  # plain Crypto-PAn moves private addresses
    manifest: dict[str, Any] = json.loads(files[MANIFEST_NAME])
    assert manifest["options"] == {
        "keep_special_ranges": False,
        "keep_domains": ["evil-c2.xyz"],
        "keep_users": ["alice"],
        "drop_geo": True,
    }


def test_names_are_remembered_across_runs_with_a_known_file(tmp_path: Path, inputs: list[Path]) -> None:
    key = str(_keyfile(tmp_path))
    known = tmp_path / "known.json"
    assert (
        _run([*map(str, inputs), "--out", str(tmp_path / "a"), "--key-file", key, "--known", str(known)]) == 0
    )
    digests = json.loads(known.read_text())
    assert digests["key_id"] and len(digests["names"]) >= 10
    assert "alice" not in known.read_text() and "web-01" not in known.read_text()
    later = tmp_path / "later"
    later.mkdir()
    # A later file names alice and web-01 in prose only: nothing in it says they are names.
    (later / "notes.md").write_text("Spoke to alice about web-01 and WEB-01.corp.acme-widgets.com.\n")
    assert _run([str(later), "--out", str(tmp_path / "b"), "--key-file", key, "--known", str(known)]) == 0
    assert _run([str(later), "--out", str(tmp_path / "c"), "--key-file", key]) == 0
    first = _read_all(tmp_path / "a")
    host = _consistent_values(first).pop()
    remembered = (tmp_path / "b" / "later" / "notes.md").read_text()
    forgotten = (tmp_path / "c" / "later" / "notes.md").read_text()
    assert "alice" not in remembered and "web-01" not in remembered.lower() and host in remembered
    assert remembered.count(host.upper()) == 1
    assert "alice" in forgotten  # without the file, a second run cannot know
    # digests made with another key are refused
    other = str(_keyfile(tmp_path, "other.key", "y" * 40))
    assert _run([str(later), "--out", str(tmp_path / "d"), "--key-file", other, "--known", str(known)]) == 2


def test_a_built_corpus_reads_back_after_pseudonymization(tmp_path: Path) -> None:
    """corpus/build.py writes {"_id", "_source"} lines per stream and a manifest of their SHA-256."""
    import hashlib

    case = tmp_path / "in" / "case-01-recon"
    case.mkdir(parents=True)
    docs = documents()
    streams = {"logs-system.auth-default": docs[3:5], "logs-zeek.dns-default": docs[6:7]}
    listing = {}
    for stream, items in streams.items():
        data = "".join(json.dumps({"_id": f"id{i}", "_source": d}) + "\n" for i, d in enumerate(items))
        (case / f"{stream}.ndjson").write_text(data, encoding="utf-8")
        listing[stream] = {
            "file": f"{stream}.ndjson",
            "count": len(items),
            "sha256": hashlib.sha256(data.encode()).hexdigest(),
        }
    manifest = {
        "case": "case-01-recon",
        "title": "Recon of web-01",
        "fingerprint": "4341fcfcc8c795b9",
        "streams": listing,
        "corpus_sha256": "x",
    }
    (case / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    out = tmp_path / "out"
    assert _run([str(case), "--out", str(out), "--key-file", str(_keyfile(tmp_path))]) == 0
    new = json.loads((out / "case-01-recon" / "manifest.json").read_text())
    assert "web-01" not in new["title"] and new["fingerprint"] == "4341fcfcc8c795b9"
    for stream, info in new["streams"].items():
        data = (out / "case-01-recon" / info["file"]).read_bytes()
        assert info["sha256"] == hashlib.sha256(data).hexdigest() != listing[stream]["sha256"]
        assert [json.loads(line)["_id"] for line in data.decode().splitlines()] == [
            f"id{i}" for i in range(info["count"])
        ]
    expected = "".join(f"{s}:{new['streams'][s]['sha256']}\n" for s in sorted(new["streams"]))
    assert new["corpus_sha256"] == hashlib.sha256(expected.encode()).hexdigest()
    auth = [json.loads(line) for line in (out / "case-01-recon" / "logs-system.auth-default.ndjson").open()]
    assert "alice" not in json.dumps(auth) and ATTACKER_IP not in json.dumps(auth)
