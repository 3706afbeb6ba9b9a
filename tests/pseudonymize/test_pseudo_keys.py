"""The key: from a file or the environment, refused when missing or short, stretched into sub-keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_soclab.pseudonymize import KEY_ENV_VAR, Pseudonymizer, PseudonymKeyError, key_id, load_key
from pytest_soclab.pseudonymize.keys import derive


def test_key_from_a_file_drops_the_trailing_newline(tmp_path: Path) -> None:
    f = tmp_path / "k"
    f.write_bytes(b"0123456789abcdef-secret\n")
    assert load_key(f) == b"0123456789abcdef-secret"


def test_key_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV_VAR, "0123456789abcdef-secret")
    assert load_key() == b"0123456789abcdef-secret"


def test_refusals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV_VAR, raising=False)
    with pytest.raises(PseudonymKeyError, match="no pseudonymization key"):
        load_key()
    monkeypatch.setenv(KEY_ENV_VAR, "")
    with pytest.raises(PseudonymKeyError, match="no pseudonymization key"):
        load_key()
    short = tmp_path / "short"
    short.write_text("tiny\n")
    with pytest.raises(PseudonymKeyError, match="at least 16 bytes"):
        load_key(short)
    with pytest.raises(PseudonymKeyError, match="cannot read"):
        load_key(tmp_path / "absent")
    with pytest.raises(PseudonymKeyError):
        Pseudonymizer(b"too short")


def test_sub_keys_are_independent_and_stable() -> None:
    secret = b"0123456789abcdef-secret"
    subs = {derive(secret, purpose) for purpose in ("crypto-pan", "names", "mac", "sid")}
    assert len(subs) == 4 and all(len(s) == 32 for s in subs)
    assert derive(secret, "names") == derive(secret, "names")
    assert len(derive(secret, "long", 80)) == 80
    assert key_id(secret) == key_id(secret) != key_id(secret + b"!")
    assert secret.hex() not in key_id(secret)


def test_str_and_bytes_keys_agree() -> None:
    assert Pseudonymizer("0123456789abcdef-secret").text("1.2.3.4") == Pseudonymizer(
        b"0123456789abcdef-secret"
    ).text("1.2.3.4")
