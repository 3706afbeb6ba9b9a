"""Hostile scenario files (issue 19): each is one clear ScenarioFileError, with bounded memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_soclab.errors import ScenarioFileError
from pytest_soclab.models.loader import load_spec, parse_text
from pytest_soclab.models.safe_yaml import load_yaml

BOMB = "\n".join(
    ["a: &a [x, x, x, x, x, x, x, x, x]"]
    + [f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]" for i in range(8)]
)  # fmt: skip


def test_alias_bomb_is_a_clear_error() -> None:
    assert len(BOMB) < 1000
    with pytest.raises(ScenarioFileError, match="alias bomb"):
        parse_text(BOMB, Path("scenarios/ATK-999.yaml"))


def test_modest_aliases_still_load() -> None:
    assert load_yaml("a: &x [1, 2]\nb: *x\n") == {"a": [1, 2], "b": [1, 2]}


def test_duplicate_key_is_an_error_naming_the_lines() -> None:
    with pytest.raises(ScenarioFileError) as err:
        parse_text("id: ATK-999\nfamily: a\nfamily: b\n", Path("scenarios/ATK-999.yaml"))
    assert "duplicate key 'family' (first at line 2)" in str(err.value) and "line 3" in str(err.value)


def test_binary_and_huge_files(tmp_path: Path) -> None:
    binary = tmp_path / "ATK-998.yaml"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe")
    with pytest.raises(ScenarioFileError, match="not a text file"):
        load_spec(binary)
    nul = tmp_path / "ATK-997.yaml"
    nul.write_bytes(b"id: ATK-997\x00\n")
    with pytest.raises(ScenarioFileError, match="NUL"):
        load_spec(nul)
    huge = tmp_path / "ATK-996.yaml"
    huge.write_text("x: " + "a" * (5 * 1024 * 1024))
    with pytest.raises(ScenarioFileError, match="larger than"):
        load_spec(huge)


def test_deeply_nested_yaml_is_an_error() -> None:
    with pytest.raises(ScenarioFileError):
        parse_text("a: " + "[" * 5000 + "]" * 5000, Path("scenarios/ATK-999.yaml"))


def test_binary_rego_file_is_a_clear_error(tmp_path: Path) -> None:
    from pytest_soclab.errors import SoclabError
    from pytest_soclab.guard.policy import read_policy_dir

    (tmp_path / "guard.rego").write_text("package soclab.guard\n")
    (tmp_path / "blob.rego").write_bytes(b"\x7fELF\x02\x01\x01\x00\xff\xfe")
    with pytest.raises(SoclabError, match="blob.rego: not a text file"):
        read_policy_dir(tmp_path)
