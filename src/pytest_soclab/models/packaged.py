"""Where the defaults that ship with the package are: the Rego policies and the case recipes.

One copy in git, the repository's `rego/` and `corpus/`. A wheel carries them inside the package
(pyproject.toml's force-include puts them at `pytest_soclab/defaults/rego` and `.../corpus`); a
source checkout (an editable install) finds them at the repository's root, next to `src/`.
A project's own `rego/` or `corpus/` (in pytest's rootdir) replaces them: see docs/guard.md.
"""

from __future__ import annotations

from pathlib import Path

_DEFAULTS = Path(__file__).resolve().parent.parent / "defaults"
_SOURCE_ROOT = Path(__file__).resolve().parents[3]  # src/pytest_soclab/models/ -> the checkout


def packaged_dir(name: str) -> Path:
    """`rego` or `corpus` as the package ships it."""
    inside = _DEFAULTS / name
    return inside if inside.is_dir() else _SOURCE_ROOT / name


def project_or_packaged(root: Path, name: str) -> Path:
    """The project's `<rootdir>/<name>/` when it has one, else the packaged copy."""
    own = root / name
    return own if own.is_dir() else packaged_dir(name)
