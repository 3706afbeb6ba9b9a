"""An on-disk cache of built corpora, keyed by the recipe fingerprint, safe for concurrent workers.

`ensure_built` returns the directory of a built case (NDJSON per data stream + manifest). The first
process to ask builds it into a temporary directory and renames it into place under a file lock;
others (xdist workers) wait on the lock and reuse it.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from filelock import FileLock

from pytest_soclab.corpus.build import MANIFEST, build_case
from pytest_soclab.corpus.generate import Progress
from pytest_soclab.corpus.recipe import CaseRecipe
from pytest_soclab.errors import SoclabError


def cache_path(cache_dir: Path, recipe: CaseRecipe, scale: float, seed: int | None) -> Path:
    return Path(cache_dir) / "corpus" / f"{recipe.id}-{recipe.fingerprint(scale, seed)}"


def _complete(path: Path) -> bool:
    try:
        manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return all((path / info["file"]).is_file() for info in manifest.get("streams", {}).values())


def ensure_built(
    recipe: CaseRecipe,
    cache_dir: Path,
    *,
    scale: float = 1.0,
    seed: int | None = None,
    progress: Progress | None = None,
    timeout: float = 1800,
) -> Path:
    """The directory of `recipe` built at (scale, seed) under `cache_dir`, building it once if needed."""
    target = cache_path(cache_dir, recipe, scale, seed)
    if _complete(target):
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SoclabError(f"cannot create corpus cache {target.parent}: {exc.strerror or exc}") from None
    with FileLock(str(target) + ".lock", timeout=timeout):
        if _complete(target):  # another worker built it while we waited
            return target
        if target.exists():
            shutil.rmtree(target)  # a leftover of an interrupted build
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
        try:
            build_case(recipe, tmp, scale=scale, seed=seed, progress=progress)
            os.replace(tmp, target)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return target
