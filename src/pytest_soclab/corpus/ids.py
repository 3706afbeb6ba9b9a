"""Deterministic identifiers: document ids, agent ids, process entity ids, zeek uids, community ids."""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import random
import struct

_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def digest(*parts: object) -> bytes:
    return hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8")).digest()


def stable_int(*parts: object, mod: int) -> int:
    return int.from_bytes(digest(*parts)[:8], "big") % mod


def rng_for(*parts: object) -> random.Random:
    """A Random seeded from the parts (str seeds hash with sha512: stable across runs and PYTHONHASHSEED)."""
    return random.Random("\x1f".join(map(str, parts)))


def doc_id(rng: random.Random) -> str:
    """An Elasticsearch-style 20-character auto id."""
    return base64.urlsafe_b64encode(rng.randbytes(15)).decode("ascii")


_B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
_PAIRS = [a + b for a in _B64URL for b in _B64URL]  # 4096 two-character codes


class DocIds:
    """Fast ids for a batch: a random 14-character prefix per batch and a 6-character counter,
    20 characters of base64url like Elasticsearch's auto ids."""

    __slots__ = ("n", "prefix")

    def __init__(self, rng: random.Random):
        self.prefix = base64.urlsafe_b64encode(rng.randbytes(12)).decode("ascii")[:14]
        self.n = rng.getrandbits(12)

    def next(self) -> str:
        n = self.n = self.n + 1
        return self.prefix + _PAIRS[(n >> 24) & 4095] + _PAIRS[(n >> 12) & 4095] + _PAIRS[n & 4095]


def doc_id_from(*parts: object) -> str:
    return base64.urlsafe_b64encode(digest(*parts)[:15]).decode("ascii")


def uuid_from(*parts: object) -> str:
    h = digest(*parts)[:16].hex()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) % 4]}{h[17:20]}-{h[20:32]}"


def hex_from(*parts: object, n: int = 32) -> str:
    return hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8")).hexdigest()[:n]


def file_hashes(*parts: object) -> dict[str, str]:
    seed = "\x1f".join(map(str, parts)).encode("utf-8")
    return {
        "md5": hashlib.md5(seed, usedforsecurity=False).hexdigest(),
        "sha1": hashlib.sha1(seed, usedforsecurity=False).hexdigest(),
        "sha256": hashlib.sha256(seed).hexdigest(),
    }


def entity_id(agent_id: str, pid: int, start_ms: int) -> str:
    """Elastic Defend's process.entity_id is base64 of agent id, pid and start time."""
    return base64.b64encode(f"{agent_id}-{pid}-{start_ms}".encode("ascii")).decode("ascii")


_B62_TABLE = bytes(ord(_B62[b % 62]) for b in range(256))


def zeek_uid(rng: random.Random) -> str:
    """A zeek connection uid: 'C' and 17 base62 characters."""
    return "C" + rng.randbytes(17).translate(_B62_TABLE).decode("ascii")


_ip_bytes_cache: dict[str, bytes] = {}


def _ip_bytes(ip: str) -> bytes:
    b = _ip_bytes_cache.get(ip)
    if b is None:
        b = ipaddress.ip_address(ip).packed
        if len(_ip_bytes_cache) < 100_000:
            _ip_bytes_cache[ip] = b
    return b


_PROTO = {"tcp": 6, "udp": 17, "icmp": 1}


def community_id(src: str, sport: int, dst: str, dport: int, transport: str, seed: int = 0) -> str:
    """Community ID v1 of a flow (the network.community_id zeek and Elastic Defend both fill)."""
    sb, db = _ip_bytes(src), _ip_bytes(dst)
    if (sb, sport) > (db, dport):
        sb, db, sport, dport = db, sb, dport, sport
    proto = _PROTO.get(transport, 6)
    data = struct.pack("!H", seed) + sb + db + struct.pack("!BBHH", proto, 0, sport, dport)
    return "1:" + base64.b64encode(hashlib.sha1(data, usedforsecurity=False).digest()).decode("ascii")
