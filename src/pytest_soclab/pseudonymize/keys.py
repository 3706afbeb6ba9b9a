"""The secret behind every pseudonym, and the sub-keys derived from it.

One secret (from a file or an environment variable) is stretched into independent
sub-keys with HMAC-SHA256, one per purpose, so that no two mappings share key
material: knowing the pseudonyms of one kind reveals nothing about another.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from pathlib import Path

from pytest_soclab.errors import SoclabError

KEY_ENV_VAR = "SOCLAB_PSEUDO_KEY"
MIN_KEY_BYTES = 16
# Bumping this changes every pseudonym: it versions the derivation, not the data.
_DERIVATION = b"pytest-soclab/pseudonymize/v1/"


class PseudonymKeyError(SoclabError):
    """No usable pseudonymization key."""


def load_key(key_file: str | os.PathLike[str] | None = None, env: str = KEY_ENV_VAR) -> bytes:
    """The secret: the content of `key_file` when given, else the environment variable `env`.

    Refuses (raises SoclabError) when neither holds a key of at least MIN_KEY_BYTES bytes:
    pseudonymizing with a guessable key would be worse than not pseudonymizing.
    """
    if key_file is not None:
        path = Path(key_file)
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise PseudonymKeyError(
                f"cannot read the pseudonymization key file {path}: {exc.strerror or exc}"
            ) from exc
        # A trailing newline is what an editor or `echo` adds: not part of the secret.
        secret = raw.rstrip(b"\r\n")
        origin = f"key file {path}"
    else:
        value = os.environ.get(env)
        if value is None or value == "":
            raise PseudonymKeyError(
                f"no pseudonymization key: give --key-file FILE or set the environment variable {env} "
                f"(at least {MIN_KEY_BYTES} bytes of secret; e.g. `head -c 32 /dev/urandom | base64`)"
            )
        secret = value.encode("utf-8")
        origin = f"environment variable {env}"
    return check_key(secret, origin)


def check_key(secret: bytes, origin: str = "key") -> bytes:
    if len(secret) < MIN_KEY_BYTES:
        raise PseudonymKeyError(
            f"the pseudonymization key from the {origin} is {len(secret)} bytes long; "
            f"it must be at least {MIN_KEY_BYTES} bytes of secret"
        )
    return secret


def derive(secret: bytes, purpose: str, length: int = 32) -> bytes:
    """A sub-key for one purpose (HMAC-SHA256 of the purpose under the secret, expanded if needed)."""
    out = b""
    counter = 0
    while len(out) < length:
        out += hmac.new(secret, _DERIVATION + purpose.encode() + bytes([counter]), hashlib.sha256).digest()
        counter += 1
    return out[:length]


def key_id(secret: bytes) -> str:
    """A short public fingerprint of the key: tells which key produced an output, reveals nothing of it."""
    return derive(secret, "key-id", 8).hex()
