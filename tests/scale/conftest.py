"""The plugin tests' project (tests/plugin) and result factories (tests/unit) are shared with these tests."""

from __future__ import annotations

import sys
from pathlib import Path

for _dir in ("plugin", "unit"):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / _dir))
