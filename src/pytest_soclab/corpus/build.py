"""Building a case to disk (NDJSON per data stream + manifest) and streaming it for bulk loads."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pytest_soclab.corpus.generate import Doc, Progress, generate
from pytest_soclab.corpus.recipe import GENERATOR_VERSION, CaseRecipe, find_case, load_case
from pytest_soclab.errors import SoclabError
from pytest_soclab.gcpause import collector_paused

MANIFEST = "manifest.json"
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def iter_case(
    corpus_dir: Path,
    case_id: str,
    *,
    scale: float = 1.0,
    seed: int | None = None,
    progress: Progress | None = None,
) -> Iterator[Doc]:
    """Stream a case's documents as (data stream, doc id, doc): what a bulk loader needs
    (e.g. `{"_op_type": "create", "_index": stream, "_id": id, "_source": doc}` for data streams)."""
    recipe = load_case(find_case(corpus_dir, case_id))
    yield from generate(recipe, scale=scale, seed=seed, progress=progress)


def build_case(
    recipe: CaseRecipe,
    out_dir: Path,
    *,
    scale: float = 1.0,
    seed: int | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Write `<out_dir>/<data stream>.ndjson` (one `_source` per line, with `_id` kept in the manifest's
    id files) and `<out_dir>/manifest.json`; return the manifest."""
    out_dir = Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SoclabError(f"cannot create output directory {out_dir}: {exc.strerror or exc}") from None
    seed_used = recipe.seed if seed is None else int(seed)
    files: dict[str, Any] = {}
    hashes: dict[str, Any] = {}
    counts: dict[str, int] = {}
    t0 = time.perf_counter()
    # Nothing built here forms reference cycles: the cyclic collector would only rescan the live documents.
    with collector_paused():
        try:
            for stream, doc_id, doc in generate(recipe, scale=scale, seed=seed_used, progress=progress):
                fh = files.get(stream)
                if fh is None:
                    fh = files[stream] = (out_dir / f"{stream}.ndjson").open("w", encoding="utf-8", newline="\n")
                    hashes[stream] = hashlib.sha256()
                    counts[stream] = 0
                # The document id travels with the document, as the bulk API's metadata line would.
                line = _encode({"_id": doc_id, "_source": doc}) + "\n"
                fh.write(line)
                hashes[stream].update(line.encode("utf-8"))
                counts[stream] += 1
        finally:
            for fh in files.values():
                fh.close()
    elapsed = time.perf_counter() - t0
    total = sum(counts.values())
    manifest = {
        "case": recipe.id,
        "title": recipe.title,
        "fingerprint": recipe.fingerprint(scale, seed_used),
        "generator_version": GENERATOR_VERSION,
        "scale": scale,
        "seed": seed_used,
        "window": {
            "start": recipe.window.start.isoformat().replace("+00:00", "Z"),
            "end": recipe.window.end.isoformat().replace("+00:00", "Z"),
        },
        "total": total,
        "streams": {
            s: {"file": f"{s}.ndjson", "count": counts[s], "sha256": hashes[s].hexdigest()}
            for s in sorted(counts)
        },
        "corpus_sha256": hashlib.sha256(
            "".join(f"{s}:{hashes[s].hexdigest()}\n" for s in sorted(counts)).encode()
        ).hexdigest(),
        "elapsed_seconds": round(elapsed, 3),
    }
    (out_dir / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def built_files(out_dir: Path) -> dict[str, Path]:
    """A built case's NDJSON file per data stream, from its manifest."""
    out_dir = Path(out_dir)
    try:
        manifest = json.loads((out_dir / MANIFEST).read_text(encoding="utf-8"))
        return {stream: out_dir / info["file"] for stream, info in manifest["streams"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise SoclabError(f"{out_dir}: not a built case (no readable {MANIFEST}: {exc!r})") from None


def read_built(out_dir: Path) -> Iterator[Doc]:
    """Read a built case back as (data stream, doc id, doc), stream by stream."""
    for stream, path in built_files(out_dir).items():
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                rec = json.loads(line)
                yield stream, rec["_id"], rec["_source"]


def bulk_actions(docs: Iterator[Doc]) -> Iterator[dict[str, Any]]:
    """(data stream, id, doc) -> actions for `elasticsearch.helpers.streaming_bulk` / `parallel_bulk`.
    Data streams accept only `create`; the alerts index takes it too."""
    for stream, doc_id, doc in docs:
        yield {"_op_type": "create", "_index": stream, "_id": doc_id, "_source": doc}
