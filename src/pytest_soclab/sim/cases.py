"""Built cases, cached on disk by content hash as DuckDB files.

A case is one of:
- a recipe, `corpus/<case>/case.yaml`: generated, with the estate the recipe describes;
- a recording, `corpus/<case>/case.yaml` with a `recording:` block: imported on first use, with
  the estate derived from the data and the case's overrides laid over it;
- prebuilt data, `corpus/<case>/manifest.json` + NDJSON per data stream (what `soclab corpus
  build` writes, and what pseudonymized or exported data looks like): loaded as is, with the
  estate derived from the data;
- with a live cluster, a case with neither: its estate is derived from the cluster's data.

Several pytest-xdist workers may ask for the same case at once: one builds under a
file lock, the others wait and then open the same read-only file.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from filelock import FileLock

from pytest_soclab.errors import SoclabError
from pytest_soclab.models import Estate

ProgressFn = Callable[[str], None]
Triple = tuple[str, str, dict[str, Any]]
# Variant K of a case's documents: (the transformed documents, what the transform learned, for the
# case's tasks). Supplied by the caller (run/variants.py): the pseudonymizer is not this room's.
VariantDocs = Callable[[int, list[Triple]], tuple[list[Triple], dict[str, Any]]]


@dataclass
class BuiltCase:
    id: str
    recipe: Any  # pytest_soclab.corpus.recipe.CaseRecipe, or None for live data with no recipe
    estate: Estate
    db_path: Path | None  # None with a live backend
    streams: list[str] = field(default_factory=list)
    manifest: dict[str, Any] = field(default_factory=dict)
    window: dict[str, Any] = field(default_factory=dict)  # {gte, lte}
    variant: int = 0  # 0: as recorded or generated; K: re-keyed and time-shifted (run/variants.py)
    known: dict[str, Any] = field(default_factory=dict)  # a variant's learned names (keyed digests)

    def now(self) -> Any:
        """The case's "now": the end of its window. Agents write `NOW() - 24 hours` and
        `now-1d`: relative to the case, as if the investigation happened when it ended."""
        from datetime import datetime

        end = self.scope()["time_range"].get("lte")
        try:
            return datetime.fromisoformat(str(end).replace("Z", "+00:00")) if end else None
        except ValueError:
            return None

    def scope(self) -> dict[str, Any]:
        """What the guard treats as the case's telemetry: its data streams and time window."""
        time_range = dict(self.window)
        if not time_range and getattr(self.recipe, "window", None) is not None:
            time_range = {"gte": _iso(self.recipe.window.start), "lte": _iso(self.recipe.window.end)}
        return {
            "indices": sorted(set(self.streams) | {"logs-*", ".alerts-security.alerts-default"}),
            "time_range": time_range,
            "allowed_domains": list(self.estate.allowed_domains),
            "business_critical_ips": sorted(self.estate.business_critical_ips),
        }


def _iso(value: Any) -> str | None:
    if value is None:
        return None
    if hasattr(value, "isoformat"):
        return value.isoformat().replace("+00:00", "Z")
    return str(value)


class CaseLibrary:
    def __init__(
        self,
        corpus_dir: Path,
        cache_dir: Path,
        *,
        scale: float = 1.0,
        seed: int | None = None,
        build_db: bool = True,
        progress: ProgressFn | None = None,
        live: Any = None,
        variant_docs: VariantDocs | None = None,
        variant_format: int = 0,
    ):
        self.corpus_dir = corpus_dir
        self.cache_dir = cache_dir
        self.scale = scale
        self.seed = seed
        self.build_db = build_db
        self.progress = progress
        self.live = live  # a live backend: cases without a recipe are derived from its data
        self.variant_docs = variant_docs
        self.variant_format = variant_format  # the transform's version: part of a variant's cache key
        self._cases: dict[tuple[str, int], BuiltCase] = {}
        self.build_seconds: dict[str, float] = {}  # cases (and variants: case@vK) built here, in seconds

    def get(self, case_id: str, variant: int = 0) -> BuiltCase:
        key = (case_id, variant)
        if key not in self._cases:
            self._cases[key] = self._load(case_id) if variant == 0 else self._variant(case_id, variant)
        return self._cases[key]

    def _variant(self, case_id: str, k: int) -> BuiltCase:
        """Variant K of a generated, recorded or prebuilt case, built from its documents and cached
        like a case, keyed by the variant; its estate and window are derived from the transformed
        data (run/variants.py lays the recipe's or the case file's roles and tiers over them)."""
        from pytest_soclab.corpus import find_case, is_recorded, load_case, load_recorded, recorded_docs
        from pytest_soclab.corpus.build import read_built
        from pytest_soclab.corpus.generate import generate
        from pytest_soclab.sim.derive_estate import derive_estate, time_range
        from pytest_soclab.store import EmbeddedBackend, build_database

        if self.variant_docs is None or not self.build_db:
            raise SoclabError(f"case {case_id}: variant {k} needs the embedded store and a variant builder")
        case_dir = self.corpus_dir / case_id
        if is_recorded(case_dir):
            recorded = load_recorded(case_dir)
            base_key = recorded.fingerprint(self.corpus_dir)

            def source() -> list[Triple]:
                return list(recorded_docs(recorded, self.corpus_dir, work_dir=self.cache_dir))
        elif (case_dir / "case.yaml").is_file():
            recipe = load_case(find_case(self.corpus_dir, case_id))
            base_key = recipe.fingerprint(self.scale, self.seed)

            def source() -> list[Triple]:
                return list(generate(recipe, scale=self.scale, seed=self.seed))
        elif (case_dir / "manifest.json").is_file():
            base_key = hashlib.sha256((case_dir / "manifest.json").read_bytes()).hexdigest()

            def source() -> list[Triple]:
                return list(read_built(case_dir))
        else:
            raise SoclabError(f"case {case_id}: no recipe and no prebuilt data to make variant {k} of")
        vid = f"{case_id}@v{k}"
        variant_docs = self.variant_docs

        def build(path: Path) -> dict[str, Any]:
            docs, known = variant_docs(k, source())
            info = build_database(docs, path)
            path.with_suffix(".known.json").write_text(json.dumps(known), encoding="utf-8")
            return info

        db, manifest = self._cached(vid, f"{base_key}:variant-{k}:format-{self.variant_format}", build)
        backend = EmbeddedBackend.open(db)
        try:
            estate, window = derive_estate(backend), time_range(backend)
        finally:
            backend.close()
        known = json.loads(db.with_suffix(".known.json").read_text(encoding="utf-8"))
        return BuiltCase(case_id, None, estate, db, sorted(manifest.get("streams", {})), manifest, window,
                         variant=k, known=known)

    def _load(self, case_id: str) -> BuiltCase:
        from pytest_soclab.corpus import estate_from_recipe
        from pytest_soclab.corpus import find_case, load_case

        from pytest_soclab.corpus import is_recorded

        case_dir = self.corpus_dir / case_id
        if is_recorded(case_dir):
            return self._recorded(case_id, case_dir)
        if not (case_dir / "case.yaml").is_file():
            if (case_dir / "manifest.json").is_file() and self.build_db:
                return self._prebuilt(case_id, case_dir)
            if self.live is not None:
                return self._derive(case_id)
        recipe = load_case(find_case(self.corpus_dir, case_id))
        estate = estate_from_recipe(recipe)
        if not self.build_db:
            return BuiltCase(case_id, recipe, estate, None)
        db_path, manifest = self._ensure_db(case_id, recipe)
        return BuiltCase(case_id, recipe, estate, db_path, sorted(manifest.get("streams", {})), manifest)

    def _prebuilt(self, case_id: str, case_dir: Path) -> BuiltCase:
        from pytest_soclab.corpus import built_files
        from pytest_soclab.sim.derive_estate import derive_estate, time_range
        from pytest_soclab.store import EmbeddedBackend, build_database

        try:
            manifest_text = (case_dir / "manifest.json").read_text(encoding="utf-8")
            declared = json.loads(manifest_text)
        except (OSError, ValueError) as exc:
            raise SoclabError(f"{case_dir / 'manifest.json'}: not a readable manifest: {exc}") from None
        # The manifest holds each stream file's hash: hashing it keys the cache on the data.
        key = hashlib.sha256(manifest_text.encode()).hexdigest()
        files = built_files(case_dir)
        db, manifest = self._cached(case_id, key, lambda path: build_database((), path, files=files))
        backend = EmbeddedBackend.open(db)
        try:
            estate, window = derive_estate(backend), time_range(backend)
        finally:
            backend.close()
        if declared.get("window"):
            window = {"gte": declared["window"].get("start"), "lte": declared["window"].get("end")}
        return BuiltCase(case_id, None, estate, db, sorted(manifest.get("streams", {})), manifest, window)

    def _recorded(self, case_id: str, case_dir: Path) -> BuiltCase:
        from pytest_soclab.corpus import load_recorded, with_overrides
        from pytest_soclab.corpus import recorded_docs
        from pytest_soclab.sim.derive_estate import derive_estate, time_range
        from pytest_soclab.store import EmbeddedBackend, build_database

        case = load_recorded(case_dir)
        window = {"gte": _iso(case.window.start), "lte": _iso(case.window.end)} if case.window else {}
        if not self.build_db:
            return BuiltCase(case_id, case, with_overrides(Estate(), case), None, window=window)

        def build(path: Path) -> dict[str, Any]:
            return build_database(recorded_docs(case, self.corpus_dir, work_dir=self.cache_dir), path)

        db, manifest = self._cached(case_id, case.fingerprint(self.corpus_dir), build)
        backend = EmbeddedBackend.open(db)
        try:
            estate, derived = derive_estate(backend), time_range(backend)
        finally:
            backend.close()
        estate = with_overrides(estate, case)
        return BuiltCase(case_id, case, estate, db, sorted(manifest.get("streams", {})), manifest, window or derived)

    def _derive(self, case_id: str) -> BuiltCase:
        from pytest_soclab.sim.derive_estate import data_streams, derive_estate, time_range

        if self.progress:
            self.progress(f"soclab: case {case_id} has no recipe: deriving its estate from the live data")
        return BuiltCase(case_id, None, derive_estate(self.live), None, data_streams(self.live), window=time_range(self.live))

    def _ensure_db(self, case_id: str, recipe: Any) -> tuple[Path, dict[str, Any]]:
        from pytest_soclab.corpus.generate import generate
        from pytest_soclab.store import build_database

        key = recipe.fingerprint(self.scale, self.seed)
        return self._cached(
            case_id, key, lambda path: build_database(generate(recipe, scale=self.scale, seed=self.seed), path)
        )

    def _cached(self, case_id: str, key: str, build: Callable[[Path], dict[str, Any]]) -> tuple[Path, dict[str, Any]]:
        """The case's store file for `key`, built by `build(path)` once, under a lock."""
        try:
            self.cache_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SoclabError(f"cannot create the case cache {self.cache_dir}: {exc.strerror or exc}") from None
        from pytest_soclab.store import FORMAT_VERSION

        # The store's format is part of the key: a store built by an older soclab is rebuilt, not reused.
        key = hashlib.sha256(f"{key}:store-format-{FORMAT_VERSION}".encode()).hexdigest()
        db = self.cache_dir / f"{case_id}-{key[:16]}.duckdb"
        manifest_path = db.with_suffix(".json")
        with FileLock(str(self.cache_dir / f"{case_id}.lock")):
            if not (db.is_file() and manifest_path.is_file()):
                self._build(case_id, build, db, manifest_path)
        return db, json.loads(manifest_path.read_text())

    def _build(self, case_id: str, build: Callable[[Path], dict[str, Any]], db: Path, manifest_path: Path) -> None:
        started = time.perf_counter()
        if self.progress:
            self.progress(f"soclab: building case {case_id} (scale {self.scale:g}) into {db.name} ...")
        info = build(db)
        streams = {name: idx["docs"] for name, idx in info.get("indices", {}).items()}
        manifest = {"case": case_id, "scale": self.scale, "seed": self.seed, "streams": streams, "build": info}
        tmp = manifest_path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True, default=str))
        tmp.replace(manifest_path)
        self.build_seconds[case_id] = time.perf_counter() - started
        if self.progress:
            total = sum(streams.values())
            self.progress(f"soclab: built case {case_id}: {total} documents in {time.perf_counter() - started:.1f}s")
