"""Prefix-preserving IP pseudonyms: Crypto-PAn (from the `yacryptopan` package), IPv4 and IPv6.

Crypto-PAn flips bit i of an address when a keyed pseudo-random function of the
address's first i bits says so. Any such flip function gives a bijection that
preserves prefixes: two addresses that share exactly k leading bits have
pseudonyms that share exactly k leading bits.

Special ranges (`keep_special=True`): the flip function is forced to "no flip" on
every tree node above a kept range (and inside a range kept verbatim). That keeps
the range's prefix, keeps the construction a prefix-preserving bijection, and
guarantees that no other address is ever mapped into a kept range, so private stays
private and public stays public. The price, inherent to keeping ranges in place
under prefix preservation: the leading bits an address shares with a kept range
are kept too (see docs/pseudonymize.md). In the same way, a /24's broadcast address keeps its
last octet (255), which analysts read as "sent to the whole subnet" (NetBIOS, discovery).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from yacryptopan import CryptoPAn

_ALL128 = (1 << 128) - 1
# Byte -> b"1" when its top bit is set: Crypto-PAn's flip bit is the top bit of each AES block.
_TOP_BIT = bytes(0x31 if b & 0x80 else 0x30 for b in range(256))


class _CryptoPAn:
    """yacryptopan's Crypto-PAn, with the per-bit AES blocks batched into one ECB call.

    yacryptopan encrypts one block per address bit (32 or 128 calls). The blocks are
    independent, so they can go through the same cipher in a single call; the result is
    bit-for-bit yacryptopan's (checked by tests/pseudonymize/test_ip.py). When the
    package's internals are not there, fall back to its public `anonymize_bin`.
    """

    def __init__(self, key32: bytes):
        self._ref = CryptoPAn(key32)
        cipher = getattr(self._ref, "_cipher", None)
        pad = getattr(self._ref, "_padding_int", None)
        self._fast = cipher is not None and hasattr(cipher, "encrypt") and isinstance(pad, int)
        if self._fast:
            self._encrypt = cipher.encrypt
            self._pad_masks = [pad & (_ALL128 >> pos) for pos in range(128)]

    def flips(self, addr: int, version: int) -> int:
        """The XOR mask Crypto-PAn applies to `addr` (bit width-1-i is the flip of bit i from the top)."""
        if not self._fast:
            return self._ref.anonymize_bin(addr, version) ^ addr
        width = 32 if version == 4 else 128
        ext = addr << 96 if version == 4 else addr
        pm = self._pad_masks
        blocks = b"".join(
            (((ext >> (128 - pos)) << (128 - pos)) | pm[pos]).to_bytes(16, "big") for pos in range(width)
        )
        return int(self._encrypt(blocks)[::16].translate(_TOP_BIT), 2)

    def reference(self, addr: int, version: int) -> int:
        """yacryptopan's own result (for tests)."""
        return self._ref.anonymize_bin(addr, version)


@dataclass(frozen=True)
class SpecialRange:
    network: str
    action: (
        str  # "verbatim": kept as is; "prefix": prefix kept, host bits pseudonymized; "embed4": IPv4 inside
    )
    why: str


# The ranges kept recognisable with keep_special=True (documented in docs/pseudonymize.md).
SPECIAL_V4: tuple[SpecialRange, ...] = (
    SpecialRange("0.0.0.0/32", "verbatim", "unspecified address"),
    SpecialRange("0.0.0.0/8", "prefix", "'this network' (RFC 791)"),
    SpecialRange("10.0.0.0/8", "prefix", "private (RFC 1918)"),
    SpecialRange("100.64.0.0/10", "prefix", "shared address space / CGNAT (RFC 6598)"),
    SpecialRange("127.0.0.0/8", "verbatim", "loopback"),
    SpecialRange("169.254.0.0/16", "prefix", "link-local (RFC 3927)"),
    SpecialRange("172.16.0.0/12", "prefix", "private (RFC 1918)"),
    SpecialRange("192.0.0.0/24", "prefix", "IETF protocol assignments (RFC 6890)"),
    SpecialRange("192.0.2.0/24", "prefix", "documentation TEST-NET-1 (RFC 5737)"),
    SpecialRange("192.168.0.0/16", "prefix", "private (RFC 1918)"),
    SpecialRange("198.18.0.0/15", "prefix", "benchmarking (RFC 2544)"),
    SpecialRange("198.51.100.0/24", "prefix", "documentation TEST-NET-2 (RFC 5737)"),
    SpecialRange("203.0.113.0/24", "prefix", "documentation TEST-NET-3 (RFC 5737)"),
    SpecialRange("224.0.0.0/24", "verbatim", "local network control multicast (mDNS, LLMNR, IGMP...)"),
    SpecialRange("239.255.255.250/32", "verbatim", "SSDP multicast"),
    SpecialRange("224.0.0.0/4", "prefix", "multicast"),
    SpecialRange("255.255.255.255/32", "verbatim", "limited broadcast"),
    SpecialRange("240.0.0.0/4", "prefix", "reserved (RFC 1112)"),
)
SPECIAL_V6: tuple[SpecialRange, ...] = (
    SpecialRange("::/128", "verbatim", "unspecified address"),
    SpecialRange("::1/128", "verbatim", "loopback"),
    SpecialRange("::ffff:0:0/96", "embed4", "IPv4-mapped: the embedded IPv4 address gets its IPv4 pseudonym"),
    SpecialRange(
        "64:ff9b::/96", "embed4", "NAT64 well-known prefix: the embedded IPv4 gets its IPv4 pseudonym"
    ),
    SpecialRange("100::/64", "prefix", "discard-only (RFC 6666)"),
    SpecialRange("2001:db8::/32", "prefix", "documentation (RFC 3849)"),
    SpecialRange("2002::/16", "prefix", "6to4"),
    SpecialRange("fc00::/7", "prefix", "unique local (RFC 4193)"),
    SpecialRange("fe80::/10", "prefix", "link-local"),
    SpecialRange("ff02::1/128", "verbatim", "all-nodes multicast"),
    SpecialRange("ff02::2/128", "verbatim", "all-routers multicast"),
    SpecialRange("ff02::fb/128", "verbatim", "mDNS multicast"),
    SpecialRange("ff02::1:2/128", "verbatim", "DHCPv6 multicast"),
    SpecialRange("ff02::1:3/128", "verbatim", "LLMNR multicast"),
    SpecialRange("ff00::/8", "prefix", "multicast"),
)


def _compile(ranges: tuple[SpecialRange, ...]) -> tuple[tuple[int, int, str], ...]:
    out = []
    for r in ranges:
        net = ipaddress.ip_network(r.network)
        out.append((int(net.network_address), net.prefixlen, r.action))
    return tuple(out)


_V4 = _compile(SPECIAL_V4)
_V6 = _compile(SPECIAL_V6)


def _broadcast_path_mask(addr: int) -> int:
    """The bits of an IPv4 address's last octet that are never flipped, so that a /24's broadcast
    address (x.y.z.255) stays one: the flips decided on the tree nodes between the /24 and its
    all-ones address. A node's flip may be any function of the node, so forcing these keeps the
    map a prefix-preserving bijection. The price: the first bit of every last octet is kept, and
    more of the leading ones an octet shares with 255."""
    ones = 8 - (~addr & 0xFF).bit_length()  # the last octet's leading ones
    kept = min(ones + 1, 8)  # the nodes at depths 24 .. 24 + ones lie on the path
    return ((1 << kept) - 1) << (8 - kept)


def common_prefix_len(a: int, b: int, width: int) -> int:
    return width - (a ^ b).bit_length()


class IpPseudonymizer:
    """Keyed, prefix-preserving pseudonyms of IP addresses. Pure function of (key, address, options)."""

    def __init__(self, key32: bytes, keep_special: bool = True):
        if len(key32) != 32:
            raise ValueError("Crypto-PAn needs a 32-byte key")
        self._cp = _CryptoPAn(key32)
        self.keep_special = keep_special
        self._memo4: dict[int, int] = {}
        self._memo6: dict[int, int] = {}
        self.memo_text: dict[str, str | None] = {}

    # ---------------------------------------------------------------- integers

    def map_int(self, addr: int, version: int) -> int:
        memo = self._memo4 if version == 4 else self._memo6
        out = memo.get(addr)
        if out is None:
            out = memo[addr] = self._map(addr, version)
        return out

    def _map(self, addr: int, version: int) -> int:
        width = 32 if version == 4 else 128
        if not self.keep_special:
            return addr ^ self._cp.flips(addr, version)
        keep_top = 0  # how many leading bits are never flipped for this address
        # The longest kept range the address is inside: in one kept to its /24 (the documentation
        # nets), all eight host bits stay random and no broadcast path is kept.
        kept_range = 0
        for root, plen, action in _V4 if version == 4 else _V6:
            shared = common_prefix_len(addr, root, width)
            if shared >= plen:  # inside the range
                if action == "verbatim":
                    return addr
                if action == "embed4":
                    host_mask = (1 << (width - plen)) - 1
                    return (addr & ~host_mask) | self.map_int(addr & host_mask, 4)
                keep_top = max(keep_top, plen)
                kept_range = max(kept_range, plen)
            else:
                # The nodes on this address's path that are ancestors of the range: depths 0..shared.
                keep_top = max(keep_top, shared + 1)
        flips = self._cp.flips(addr, version) & ((1 << (width - min(keep_top, width))) - 1)
        if version == 4 and kept_range < 24:
            flips &= ~_broadcast_path_mask(addr)
        return addr ^ flips

    # ---------------------------------------------------------------- text

    def address(self, text: str) -> str | None:
        """The pseudonym of an address written as text, in the same notation; None when not an address."""
        memo = self.memo_text
        if text in memo:
            return memo[text]
        out = memo[text] = self._address(text)
        if len(memo) > 1_000_000:
            memo.clear()
        return out

    def _address(self, text: str) -> str | None:
        body, zone = text, ""
        if "%" in text:  # IPv6 zone id (fe80::1%eth0): not part of the address
            body, _, z = text.partition("%")
            zone = "%" + z
        try:
            ip = ipaddress.ip_address(body)
        except ValueError:
            return None
        if ip.version == 4:
            return str(ipaddress.IPv4Address(self.map_int(int(ip), 4)))
        mapped = ipaddress.IPv6Address(self.map_int(int(ip), 6))
        if "." in body:  # keep a dotted IPv4 tail (::ffff:10.0.0.1) in that notation
            return _v6_with_v4_tail(int(mapped)) + zone
        return mapped.compressed + zone

    def network(self, addr_text: str, prefix: int) -> str | None:
        """`addr/prefix`: the address's pseudonym; a network address (host bits 0) stays one."""
        try:
            ip = ipaddress.ip_address(addr_text)
        except ValueError:
            return None
        width = 32 if ip.version == 4 else 128
        if not 0 <= prefix <= width:
            return None
        value = int(ip)
        host_mask = (1 << (width - prefix)) - 1
        out = self.map_int(value, ip.version)
        if value & host_mask == 0:
            out &= ~host_mask
        cls = ipaddress.IPv4Address if ip.version == 4 else ipaddress.IPv6Address
        text = str(cls(out)) if ip.version == 4 else cls(out).compressed
        return f"{text}/{prefix}"

    def octet_glob(self, octets: list[int]) -> str:
        """An IPv4 prefix glob (`10.1.*`): the glob of the pseudonymized prefix (`10.77.*`)."""
        value = 0
        for o in octets:
            value = (value << 8) | o
        value <<= 8 * (4 - len(octets))
        out = self.map_int(value, 4)
        parts = [str((out >> (24 - 8 * i)) & 0xFF) for i in range(len(octets))]
        return ".".join(parts) + ".*"


def _v6_with_v4_tail(value: int) -> str:
    """An IPv6 address written with its last 32 bits as a dotted IPv4 address: "::ffff:10.0.0.1"."""
    head = ipaddress.IPv6Address((value >> 32) << 32).compressed
    tail = str(ipaddress.IPv4Address(value & 0xFFFFFFFF))
    if head.endswith("::"):
        return head + tail
    return head[: -len(":0:0")] + ":" + tail  # the last two groups are zero by construction
