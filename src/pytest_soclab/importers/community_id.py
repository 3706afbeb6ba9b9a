"""Community ID v1 flow hashes (network.community_id), from the published specification: SHA-1 over
seed, the ordered endpoint addresses, protocol, a zero pad byte and the ordered ports, base64."""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import struct

PROTOCOLS = {"icmp": 1, "tcp": 6, "udp": 17, "sctp": 132, "ipv6-icmp": 58}


def community_id(src: str, sport: int, dst: str, dport: int, transport: str, seed: int = 0) -> str | None:
    proto = PROTOCOLS.get(transport.lower())
    if proto is None:
        return None
    try:
        a, b = ipaddress.ip_address(src).packed, ipaddress.ip_address(dst).packed
    except ValueError:
        return None
    if len(a) != len(b):
        return None
    # order the endpoints so both directions of a flow hash the same (ICMP type/code pairs are not
    # folded here: Zeek's conn log already reports them as ports)
    if (a, sport) > (b, dport):
        a, b, sport, dport = b, a, dport, sport
    payload = struct.pack("!H", seed) + a + b + struct.pack("!BB", proto, 0) + struct.pack("!HH", sport, dport)
    return "1:" + base64.b64encode(hashlib.sha1(payload).digest()).decode()
