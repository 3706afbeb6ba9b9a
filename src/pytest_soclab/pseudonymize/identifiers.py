"""Pseudonyms of structured identifiers found by their shape: MAC addresses and Windows domain SIDs."""

from __future__ import annotations

import hashlib
import hmac


class MacPseudonymizer:
    """MAC addresses: the vendor prefix (OUI, first 3 octets) is kept, the device part is permuted.

    The device part goes through a keyed 4-round Feistel network on 24 bits (tweaked by the
    OUI), so two devices of one vendor never collide.
    """

    def __init__(self, key: bytes):
        self._key = key
        self._memo: dict[str, str] = {}

    def _round(self, oui: int, rnd: int, half: int) -> int:
        msg = oui.to_bytes(3, "big") + bytes([rnd]) + half.to_bytes(2, "big")
        return int.from_bytes(hmac.new(self._key, msg, hashlib.sha256).digest()[:2], "big") & 0xFFF

    def device(self, oui: int, nic: int) -> int:
        left, right = nic >> 12, nic & 0xFFF
        for rnd in range(4):
            left, right = right, left ^ self._round(oui, rnd, right)
        return (left << 12) | right

    def mac(self, text: str, sep: str) -> str:
        out = self._memo.get(text)
        if out is None:
            octets = text.split(sep)
            value = int("".join(octets), 16)
            oui, nic = value >> 24, value & 0xFFFFFF
            new = (oui << 24) | self.device(oui, nic)
            hexs = f"{new:012x}"
            if text.upper() == text:
                hexs = hexs.upper()
            out = sep.join(hexs[i : i + 2] for i in range(0, 12, 2))
            self._memo[text] = out
        return out


class SidPseudonymizer:
    """Windows domain SIDs (S-1-5-21-A-B-C[-RID]): the domain identifier A-B-C is replaced by keyed
    numbers, the relative id (500 Administrator, 512 Domain Admins, 1001...) is kept."""

    def __init__(self, key: bytes):
        self._key = key
        self._memo: dict[str, str] = {}

    def domain(self, sub: str) -> str:
        """`A-B-C` -> its pseudonym, three 32-bit numbers."""
        out = self._memo.get(sub)
        if out is None:
            digest = hmac.new(self._key, sub.encode("ascii"), hashlib.sha256).digest()
            nums = [int.from_bytes(digest[i : i + 4], "big") for i in (0, 4, 8)]
            out = self._memo[sub] = "-".join(str(n) for n in nums)
        return out
