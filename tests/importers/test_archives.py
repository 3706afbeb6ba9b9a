"""Archives (.zip, .gz, .tar.gz, nested), otrf detection per member, truncated input, determinism."""

from __future__ import annotations

import gzip
import io
import tarfile
import zipfile
from pathlib import Path

from importers_testlib import SYSMON, ZEEK_CONN_TSV, jl, nxlog

from pytest_soclab.importers import import_files, streams

WIN = jl([nxlog(SYSMON, 1, ProcessId="1", Image="C:\\a.exe"), nxlog("Security", 4624, TargetUserName="u")])
ZEEK_JSON = jl([{"ts": 1709287200.0, "uid": "C1", "id.orig_h": "10.0.0.1", "id.orig_p": 1, "id.resp_h": "10.0.0.2",
                 "id.resp_p": 53, "proto": "udp", "query": "a.test"}])  # fmt: skip


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def _tgz(path: Path, members: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


def _recording(tmp_path: Path) -> list[Path]:
    host = _zip(tmp_path / "host.zip", {"events.json": WIN.encode(), "__MACOSX/._events.json": b"\x00\x05\x16\x07junk"})
    net = _zip(tmp_path / "net.zip", {"conn.log": ZEEK_CONN_TSV.encode(), "dns.log": ZEEK_JSON.encode(),
                                      "capture.pcap": b"\xd4\xc3\xb2\xa1\x00\x00"})  # fmt: skip
    old = _tgz(tmp_path / "old.tar.gz", {"dir/more.json": WIN.encode()})
    single = tmp_path / "single.json.gz"
    single.write_bytes(gzip.compress(WIN.encode()))
    nested = _zip(tmp_path / "nested.zip", {"inner.tar.gz": (tmp_path / "old.tar.gz").read_bytes()})
    return [host, net, old, single, nested]


def test_otrf_detects_each_member(tmp_path: Path) -> None:
    summary = import_files("otrf", _recording(tmp_path), tmp_path / "out")
    assert summary.streams == {
        streams.SECURITY: 4,
        streams.SYSMON: 4,
        "logs-zeek.connection-default": 2,
        "logs-zeek.dns-default": 1,
    }
    rel = lambda label: label.removeprefix(f"{tmp_path}/")  # noqa: E731
    formats = {rel(i.file): i.format for i in summary.inputs}
    assert formats == {
        "host.zip::events.json": "windows",
        "nested.zip::inner.tar.gz::dir/more.json": "windows",
        "net.zip::conn.log": "zeek-tsv",
        "net.zip::dns.log": "zeek-json",
        "old.tar.gz::dir/more.json": "windows",
        "single.json.gz::single.json": "windows",
    }
    skipped = {rel(s.file): s.reason for s in summary.skipped}
    assert skipped == {"host.zip::__MACOSX/._events.json": "macOS resource fork, not data",
                       "net.zip::capture.pcap": "binary data (not text lines)"}  # fmt: skip
    assert summary.malformed == []


def test_output_is_byte_identical_and_order_free(tmp_path: Path) -> None:
    paths = _recording(tmp_path)
    first = import_files("otrf", paths, tmp_path / "a")
    second = import_files("otrf", list(reversed(paths)), tmp_path / "b")
    assert first.streams == second.streams
    for stream, path in first.files.items():
        assert Path(path).read_bytes() == Path(second.files[stream]).read_bytes(), stream
    assert not list((tmp_path / "a").glob("*.part"))


def test_directory_input_and_truncated_gzip(tmp_path: Path) -> None:
    data = gzip.compress(("".join([WIN] * 200)).encode())
    (tmp_path / "rec").mkdir()
    (tmp_path / "rec" / "cut.json.gz").write_bytes(data[: len(data) * 2 // 3])
    summary = import_files("windows", [tmp_path / "rec"], tmp_path / "out")
    assert 0 < summary.events < 400  # what could be read was kept
    (bad,) = summary.malformed
    assert bad.file.endswith("cut.json.gz::cut.json") and bad.line == summary.events + 1
    assert "input ends early" in bad.reason


def test_windows_kind_reports_foreign_lines(tmp_path: Path) -> None:
    src = tmp_path / "x.json"
    src.write_text(WIN + '{"hello": 1}\n[1, 2]\nnot json\n\n', encoding="utf-8")
    summary = import_files("windows", [src], tmp_path / "out")
    assert summary.events == 2
    assert [(m.line, m.reason.split(" (")[0].split(":")[0]) for m in summary.malformed] == [
        (3, "not a Windows event"),
        (4, "a JSON list, not an object"),
        (5, "invalid JSON"),
    ]
