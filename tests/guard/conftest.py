"""Fixtures for the guard tests."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from guard_fixtures import POLICY_DIR, make_input
from pytest_soclab.guard import load_guard


@pytest.fixture(scope="session")
def policy_dir() -> Path:
    return POLICY_DIR


@pytest.fixture(scope="session")
def guard():
    g = load_guard(POLICY_DIR)
    yield g
    g.close()


@pytest.fixture
def call() -> Callable[..., dict[str, Any]]:
    return make_input


@pytest.fixture
def fake_opa(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An `opa` executable on PATH that is the fake in fake_opa.py (see its docstring)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "opa"
    script = Path(__file__).with_name("fake_opa.py")
    exe.write_text(
        f"#!{sys.executable}\nimport runpy, sys\nsys.argv[0] = {str(script)!r}\n"
        f"runpy.run_path({str(script)!r}, run_name='__main__')\n"
    )
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    return exe
