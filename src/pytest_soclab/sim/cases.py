"""Built cases: recipe -> generated corpus -> DuckDB file, cached on disk by content hash.

Several pytest-xdist workers may ask for the same case at once: one builds under a
file lock, the others wait and then open the same read-only file.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from filelock import FileLock

from pytest_soclab.models.estate import Estate

ProgressFn = Callable[[str], None]


@dataclass
class BuiltCase:
    id: str
    recipe: Any  # pytest_soclab.corpus.recipe.CaseRecipe
    estate: Estate
    db_path: Path | None  # None with a live backend
    streams: list[str] = field(default_factory=list)
    manifest: dict[str, Any] = field(default_factory=dict)

    def scope(self) -> dict[str, Any]:
        """What the guard treats as the case's telemetry: its data streams and time window."""
        window = getattr(self.recipe, "window", None)
        time_range = {}
        if window is not None:
            time_range = {"gte": _iso(getattr(window, "start", None)), "lte": _iso(getattr(window, "end", None))}
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
    ):
        self.corpus_dir = corpus_dir
        self.cache_dir = cache_dir
        self.scale = scale
        self.seed = seed
        self.build_db = build_db
        self.progress = progress
        self._cases: dict[str, BuiltCase] = {}

    def get(self, case_id: str) -> BuiltCase:
        if case_id not in self._cases:
            self._cases[case_id] = self._load(case_id)
        return self._cases[case_id]

    def _load(self, case_id: str) -> BuiltCase:
        from pytest_soclab.corpus.estate import estate_from_recipe
        from pytest_soclab.corpus.recipe import find_case, load_case

        recipe = load_case(find_case(self.corpus_dir, case_id))
        estate = estate_from_recipe(recipe)
        if not self.build_db:
            return BuiltCase(case_id, recipe, estate, None)
        db_path, manifest = self._ensure_db(case_id, recipe)
        return BuiltCase(case_id, recipe, estate, db_path, sorted(manifest.get("streams", {})), manifest)

    def _ensure_db(self, case_id: str, recipe: Any) -> tuple[Path, dict[str, Any]]:
        key = recipe.fingerprint(self.scale, self.seed)
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        db = self.cache_dir / f"{case_id}-{key[:16]}.duckdb"
        manifest_path = db.with_suffix(".json")
        with FileLock(str(self.cache_dir / f"{case_id}.lock")):
            if not (db.is_file() and manifest_path.is_file()):
                self._build(case_id, recipe, db, manifest_path)
        return db, json.loads(manifest_path.read_text())

    def _build(self, case_id: str, recipe: Any, db: Path, manifest_path: Path) -> None:
        from pytest_soclab.corpus.generate import generate
        from pytest_soclab.store.embedded import build_database

        started = time.perf_counter()
        if self.progress:
            self.progress(f"soclab: building case {case_id} (scale {self.scale:g}) into {db.name} ...")
        info = build_database(generate(recipe, scale=self.scale, seed=self.seed), db)
        streams = {name: idx["docs"] for name, idx in info.get("indices", {}).items()}
        manifest = {"case": case_id, "scale": self.scale, "seed": self.seed, "streams": streams, "build": info}
        tmp = manifest_path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True, default=str))
        tmp.replace(manifest_path)
        if self.progress:
            total = sum(streams.values())
            self.progress(f"soclab: built case {case_id}: {total} documents in {time.perf_counter() - started:.1f}s")
