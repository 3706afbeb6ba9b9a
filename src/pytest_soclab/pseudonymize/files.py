"""Files and directories: task JSON, corpus NDJSON (plain or bulk), evidence.json, results JSON,
transcripts (JSON lines), reports (markdown, text, HTML, XML), YAML; each optionally gzipped.

`pseudonymize_paths` learns from every input before transforming any, so that a name learned
from one file is hidden in all of them, whatever their order. JSON and JSON-lines files are parsed
once and kept for the transformation while they fit a memory budget (parsing is most of the cost);
past it, a file is read again.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from pytest_soclab.errors import SoclabError
from pytest_soclab.pseudonymize import jsonlines
from pytest_soclab.pseudonymize.pseudonymizer import Pseudonymizer, bulk

MANIFEST_NAME = "pseudonymization.json"
JSON_SUFFIXES = (".json",)
LINES_SUFFIXES = (".ndjson", ".jsonl")
TEXT_SUFFIXES = (".md", ".txt", ".log", ".csv", ".tsv", ".html", ".htm", ".xml")
YAML_SUFFIXES = (".yaml", ".yml")
_BULK_ACTIONS = ("index", "create", "update", "delete")
_DOC_HINTS = ("@timestamp", "event", "data_stream", "ecs")
_HIT_KEYS = frozenset(
    {"_id", "_index", "_source", "_routing", "_score", "_version", "_seq_no", "_primary_term"}
)
# Parsed JSON kept between the passes, counted in characters of JSON text read: parsed objects
# take ~7 times their JSON size (bench/pseudonymize_bench.py documents: 44 MB of NDJSON, ~320 MB parsed).
RETAIN_CHARS = 64 * 2**20
# What the transformation does with a record kept from pass 1.
_LEAVE, _TRANSFORM, _MARKED = 0, 1, 2


@dataclass
class FileReport:
    output: str  # relative to the output directory (already pseudonymized)
    kind: str
    records: int = 0


@dataclass
class Manifest:
    key_id: str
    options: dict[str, Any]
    files: list[FileReport] = field(default_factory=list)
    names_learned: int = 0
    domains_learned: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "tool": "soclab pseudonymize",
            "format": 1,
            "key_id": self.key_id,
            "options": self.options,
            "names_learned": self.names_learned,
            "domains_learned": self.domains_learned,
            "files": [{"path": f.output, "kind": f.kind, "records": f.records} for f in self.files],
        }


def file_kind(path: Path) -> str | None:
    name = path.name.lower()
    name = name.removesuffix(".gz")
    for kind, suffixes in (
        ("json", JSON_SUFFIXES),
        ("lines", LINES_SUFFIXES),
        ("text", TEXT_SUFFIXES),
        ("yaml", YAML_SUFFIXES),
    ):
        if name.endswith(suffixes):
            return kind
    return None


def _open_text(path: Path) -> io.TextIOBase:
    if path.name.lower().endswith(".gz"):
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8")  # type: ignore[return-value]
    return open(path, encoding="utf-8")


def _write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.name.lower().endswith(".gz"):
        # mtime=0 and no file name in the header: the same input gives byte-identical output.
        with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz:
            gz.write(data)
    else:
        path.write_bytes(data)


# ---------------------------------------------------------------- one value


def is_task(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("ground_truth"), dict) and "scoring" in obj


def is_document(obj: Any) -> bool:
    return isinstance(obj, dict) and "_source" not in obj and any(h in obj for h in _DOC_HINTS)


def learn_value(p: Pseudonymizer, obj: Any) -> None:
    if is_task(obj):
        p.learn_task(obj)
    elif is_document(obj):
        p.learn_document(obj)
    else:
        p.learn_json(obj)


def _is_plain_hit(obj: Any) -> bool:
    """A search hit or a built corpus line ({"_id", "_source"}): the document and its metadata only."""
    return isinstance(obj, dict) and isinstance(obj.get("_source"), dict) and set(obj) <= _HIT_KEYS


def transform_value(p: Pseudonymizer, obj: Any) -> Any:
    if _is_plain_hit(obj):
        p.walker.doc_in_place(obj["_source"])  # freshly parsed: ours to change, nothing shared
        return obj
    if is_task(obj):
        return p.task(obj, learn=False)
    if is_document(obj):
        return p.walker.doc_in_place(obj)  # freshly parsed: ours to change, and nothing in it is shared
    return p.json(obj, learn=False)


def _marked_document(p: Pseudonymizer, obj: Any) -> dict[str, Any] | None:
    """The document `transform_value` would change in place, when learning can mark it for
    `DocumentWalker.transform_marked` (which does the same); None for anything else."""
    if p.drop_geo:
        return None
    if _is_plain_hit(obj):
        return obj["_source"]  # type: ignore[no-any-return]
    if is_document(obj) and not is_task(obj):
        return obj  # type: ignore[no-any-return]
    return None


def _learn_record(p: Pseudonymizer, obj: Any) -> int:
    """Learn one value kept for the transformation; what the transformation then has to do."""
    doc = _marked_document(p, obj)
    if doc is None:
        learn_value(p, obj)
        return _TRANSFORM
    p.walker.learn_marking((doc,))  # parsed JSON: nothing shared
    if doc is not obj:  # a search hit: what learn_json learns from it besides the document
        for k, v in obj.items():
            if k != "_source" and type(v) in (dict, list):
                p.walker.learn_json(v)
    return _MARKED


def _is_bulk_action(obj: Any) -> bool:
    return (
        isinstance(obj, dict)
        and len(obj) == 1
        and next(iter(obj)) in _BULK_ACTIONS
        and isinstance(next(iter(obj.values())), dict)
    )


# ---------------------------------------------------------------- one file


class _Line(NamedTuple):
    value: Any
    action: bool  # a bulk action line (left as it is)
    size: int  # characters
    text: str | None  # the line when orjson read it (see jsonlines.dumps)


def _parse_lines(path: Path) -> Iterator[_Line]:
    """The non-empty lines of a JSON-lines file, parsed."""
    with _open_text(path) as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj, text = jsonlines.loads(line)
            except json.JSONDecodeError as exc:
                raise SoclabError(f"{path}:{n}: not a JSON line: {exc.msg} (column {exc.colno})") from exc
            yield _Line(obj, _is_bulk_action(obj), len(line), text)



def _load_json(path: Path) -> tuple[Any, bool, int]:
    """The value of a JSON file, whether it is pretty-printed (so is the output), its length."""
    with _open_text(path) as fh:
        raw = fh.read()
    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise SoclabError(f"{path}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}") from exc
    return obj, "\n" in raw.strip(), len(raw)


def _load_yaml(path: Path) -> Any:
    with _open_text(path) as fh:
        try:
            return yaml.safe_load(fh)
        except yaml.YAMLError as exc:
            raise SoclabError(f"{path}: not YAML: {exc}") from exc


def learn_file(p: Pseudonymizer, path: Path) -> None:
    kind = file_kind(path)
    if kind == "lines":
        for line in _parse_lines(path):
            if not line.action:
                learn_value(p, line.value)
    elif kind == "json":
        _learn_json_value(p, _load_json(path)[0])
    elif kind == "yaml":
        learn_value(p, _load_yaml(path))
    elif kind == "text":
        with _open_text(path) as fh:
            for line in fh:
                p.learn_text(line.rstrip("\n"))


@dataclass
class KeptFile:
    """A JSON or JSON-lines file parsed and learned in pass 1, kept for pass 2 (no second parse)."""

    kind: str  # "lines" or "json"
    records: list[Any]  # the values: the lines of a JSON-lines file, the items of a JSON array, or the value
    todo: list[int]  # per record: _LEAVE, _TRANSFORM or _MARKED (changed by transform_marked already)
    texts: list[str | None] = field(default_factory=list)  # JSON lines: as jsonlines.loads gave them
    chars: int = 0  # characters of JSON text parsed
    indented: bool = False  # JSON: pretty-printed in, pretty-printed out
    array: bool = False  # JSON: the value is an array of `records`


def learn_and_keep(p: Pseudonymizer, path: Path, room: int) -> KeptFile | None:
    """`learn_file`, returning a JSON or JSON-lines file parsed for `transform_kept` when its text
    fits in `room` characters; None otherwise (then pass 2 reads it again). Call
    `p.walker.transform_marked()` after learning every input and before `transform_kept`."""
    kind = file_kind(path)
    if kind == "lines":
        return _learn_and_keep_lines(p, path, room)
    if kind == "json":
        obj, indented, chars = _load_json(path)
        if chars > room:
            _learn_json_value(p, obj)
            return None
        array = isinstance(obj, list)
        records = obj if array else [obj]
        todo = [_learn_record(p, r) for r in records]
        return KeptFile(kind, records, todo, chars=chars, indented=indented, array=array)
    learn_file(p, path)
    return None


def _learn_and_keep_lines(p: Pseudonymizer, path: Path, room: int) -> KeptFile | None:
    """learn_and_keep for a JSON-lines file: kept until its lines pass `room` characters; from
    there on, the lines are learned only (and the marks left on the kept ones are dropped)."""
    marks_at = p.walker.mark_state()
    kept: KeptFile | None = KeptFile("lines", [], [])
    for line in _parse_lines(path):
        if kept is not None and kept.chars + line.size > room:
            p.walker.forget_marks(marks_at)  # the transformation will read the file again
            kept = None
        if kept is None:
            if not line.action:
                learn_value(p, line.value)
            continue
        kept.chars += line.size
        kept.records.append(line.value)
        kept.todo.append(_LEAVE if line.action else _learn_record(p, line.value))
        kept.texts.append(line.text)
    return kept


def transform_kept(p: Pseudonymizer, kept: KeptFile) -> tuple[bytes, int]:
    """`transform_file` for a file kept by `learn_and_keep`."""
    new = [r if t != _TRANSFORM else transform_value(p, r) for r, t in zip(kept.records, kept.todo)]
    if kept.kind == "lines":
        return _dump_lines(p, new, kept.texts, kept.todo), sum(t != _LEAVE for t in kept.todo)
    return _dump_json(new if kept.array else new[0], kept.indented), len(new)


def _dump_lines(p: Pseudonymizer, values: list[Any], texts: list[str | None], todo: list[int]) -> bytes:
    """The JSON lines of transformed `values`, read from `texts` (what `todo` did to each)."""
    dumps = jsonlines.dumps

    def redo(obj: Any) -> Any:
        return transform_value(p, obj)

    def leave(obj: Any) -> Any:
        return obj

    out = [dumps(v, s, leave if t == _LEAVE else redo) for v, s, t in zip(values, texts, todo)]
    return b"\n".join(out) + (b"\n" if out else b"")


def _dump_json(value: Any, indented: bool) -> bytes:
    return (json.dumps(value, ensure_ascii=False, indent=2 if indented else None) + "\n").encode("utf-8")


def _learn_json_value(p: Pseudonymizer, obj: Any) -> None:
    """Learn the value of a JSON file: an array item by item."""
    for item in obj if isinstance(obj, list) else [obj]:
        learn_value(p, item)


def transform_file(p: Pseudonymizer, path: Path) -> tuple[bytes, int]:
    """The pseudonymized content of one file, and how many records it held."""
    kind = file_kind(path)
    if kind == "lines":
        new: list[Any] = []
        texts: list[str | None] = []
        todo: list[int] = []
        for line in _parse_lines(path):
            new.append(line.value if line.action else transform_value(p, line.value))
            texts.append(line.text)
            todo.append(_LEAVE if line.action else _TRANSFORM)
        return _dump_lines(p, new, texts, todo), sum(t != _LEAVE for t in todo)
    if kind == "json":
        obj, indented, _ = _load_json(path)
        if isinstance(obj, list):
            return _dump_json([transform_value(p, item) for item in obj], indented), len(obj)
        return _dump_json(transform_value(p, obj), indented), 1
    if kind == "yaml":
        new = transform_value(p, _load_yaml(path))
        return yaml.safe_dump(new, sort_keys=False, allow_unicode=True).encode("utf-8"), 1
    if kind == "text":
        with _open_text(path) as fh:
            lines = [p.text(line) for line in fh]
        return "".join(lines).encode("utf-8"), len(lines)
    raise SoclabError(f"{path}: unsupported file type")


# ---------------------------------------------------------------- paths


def _refresh_stream_manifests(written: list[Path]) -> None:
    """A built corpus lists its stream files with their SHA-256 (corpus/build.py): recompute them for
    the pseudonymized files, so that the pseudonymized corpus reads back like a built one."""
    for path in written:
        if path.suffix != ".json":
            continue
        try:
            obj = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        streams = obj.get("streams") if isinstance(obj, dict) else None
        if not isinstance(streams, dict) or not streams:
            continue
        if not all(
            isinstance(v, dict) and isinstance(v.get("file"), str) and "sha256" in v for v in streams.values()
        ):
            continue
        for info in streams.values():
            target = path.parent / info["file"]
            if target.is_file():
                info["sha256"] = hashlib.sha256(target.read_bytes()).hexdigest()
        if "corpus_sha256" in obj:
            listing = "".join(f"{s}:{streams[s]['sha256']}\n" for s in sorted(streams))
            obj["corpus_sha256"] = hashlib.sha256(listing.encode()).hexdigest()
        path.write_text(json.dumps(obj, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def collect_inputs(paths: list[Path], skip_unsupported: bool = False) -> list[tuple[Path, Path]]:
    """(input file, output path relative to the output directory), in a stable order."""
    out: list[tuple[Path, Path]] = []
    unsupported: list[Path] = []
    for given in paths:
        if not given.exists():
            raise SoclabError(f"{given}: no such file or directory")
        if given.is_dir():
            for f in sorted(q for q in given.rglob("*") if q.is_file()):
                rel = Path(given.resolve().name) / f.relative_to(given)
                if file_kind(f) is None:
                    unsupported.append(f)
                else:
                    out.append((f, rel))
        elif file_kind(given) is None:
            unsupported.append(given)
        else:
            out.append((given, Path(given.name)))
    if unsupported and not skip_unsupported:
        listed = ", ".join(str(u) for u in unsupported[:10]) + (" ..." if len(unsupported) > 10 else "")
        raise SoclabError(
            f"{len(unsupported)} file(s) of a type that cannot be pseudonymized (they would leave as they are): "
            f"{listed}. Remove them, or pass --skip-unsupported to leave them out of the output."
        )
    return out


def pseudonymize_paths(
    paths: list[Path | str],
    out_dir: Path | str,
    p: Pseudonymizer,
    skip_unsupported: bool = False,
    known_file: Path | str | None = None,
    retain_chars: int = RETAIN_CHARS,
) -> Manifest:
    """Pseudonymize files and directories into `out_dir` (same layout, names pseudonymized too).

    With `known_file`, the names learned by earlier runs (keyed digests) are loaded from it when it
    exists, and everything known after this run's learning is written back to it. JSON files are
    kept parsed between the passes up to `retain_chars` characters in all, read twice past that.
    """
    out_dir = Path(out_dir)
    inputs = collect_inputs([Path(x) for x in paths], skip_unsupported)
    if not inputs:
        raise SoclabError("no input files to pseudonymize")
    out_resolved = out_dir.resolve()
    for given in paths:
        g = Path(given).resolve()
        if g.is_dir() and (out_resolved == g or g in out_resolved.parents):
            raise SoclabError(
                f"the output directory {out_dir} is inside the input {given}: choose another --out"
            )
    for src, _ in inputs:
        p_src = src.resolve()
        if p_src == out_resolved or out_resolved in p_src.parents:
            raise SoclabError(
                f"the input {src} is inside the output directory {out_dir}: choose another --out"
            )

    with bulk():  # everything kept between the passes is acyclic: no collector scans of it
        return _pseudonymize_inputs(inputs, out_dir, p, known_file, retain_chars)


def _pseudonymize_inputs(
    inputs: list[tuple[Path, Path]],
    out_dir: Path,
    p: Pseudonymizer,
    known_file: Path | str | None,
    retain_chars: int,
) -> Manifest:
    if known_file is not None and Path(known_file).exists():
        known_path = Path(known_file)
        try:
            data = json.loads(known_path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise SoclabError(f"{known_path}: cannot read the known-names file: {exc}") from exc
        p.load_known(data, str(known_path))
    kept: dict[Path, KeptFile] = {}
    room = retain_chars
    try:
        for src, _ in inputs:  # pass 1: learn everything, keeping parsed files while they fit
            kept_file = learn_and_keep(p, src, room)
            if kept_file is not None:
                kept[src] = kept_file
                room -= kept_file.chars
        for _, rel in inputs:  # names in file and directory names are names too
            for part in rel.parts:
                p.learn_text(part)
    except BaseException:
        p.walker.forget_marks()
        raise
    p.walker.transform_marked()  # the documents of the kept files, learned with marks
    if known_file is not None:
        _write_bytes(Path(known_file), (json.dumps(p.export_known(), indent=1) + "\n").encode("utf-8"))

    manifest = Manifest(key_id=p.key_id, options=p.options())
    targets: dict[Path, Path] = {}
    for src, rel in inputs:  # pass 2: transform
        new_rel = Path(*[p.text(part) for part in rel.parts])
        if new_rel in targets:
            raise SoclabError(f"{src} and {targets[new_rel]} would both be written to {out_dir / new_rel}")
        targets[new_rel] = src
        kept_file = kept.pop(src, None)  # dropped once written: memory goes back as files are done
        data, count = transform_file(p, src) if kept_file is None else transform_kept(p, kept_file)
        _write_bytes(out_dir / new_rel, data)
        manifest.files.append(FileReport(output=new_rel.as_posix(), kind=file_kind(src) or "", records=count))
    _refresh_stream_manifests([out_dir / f.output for f in manifest.files])
    manifest.names_learned = len(p.known.bare)
    manifest.domains_learned = len(p.known.domains)
    _write_bytes(out_dir / MANIFEST_NAME, (json.dumps(manifest.to_json(), indent=2) + "\n").encode("utf-8"))
    return manifest
