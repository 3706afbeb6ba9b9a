"""IP pseudonyms: Crypto-PAn equal to yacryptopan's, prefix-preserving, bijective, special ranges kept."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_soclab.pseudonymize.ip import (
    SPECIAL_V4,
    SPECIAL_V6,
    IpPseudonymizer,
    _CryptoPAn,
    common_prefix_len,
)

KEY = bytes(range(32))
OTHER = bytes(range(1, 33))

v4 = st.integers(min_value=0, max_value=2**32 - 1)
v6 = st.integers(min_value=0, max_value=2**128 - 1)


def _special(ranges, version):  # type: ignore[no-untyped-def]
    return [(ipaddress.ip_network(r.network), r.action) for r in ranges]


SPECIAL4 = _special(SPECIAL_V4, 4)
SPECIAL6 = _special(SPECIAL_V6, 6)


@st.composite
def near_special(draw, version: int) -> int:  # type: ignore[no-untyped-def]
    """An address inside a kept range, or sharing some leading bits with one (the interesting cases)."""
    width = 32 if version == 4 else 128
    net, _ = draw(st.sampled_from(SPECIAL4 if version == 4 else SPECIAL6))
    host_bits = width - net.prefixlen
    addr = int(net.network_address) | draw(st.integers(min_value=0, max_value=(1 << host_bits) - 1))
    if draw(st.booleans()):  # leave the range by flipping one bit of its prefix
        pos = draw(st.integers(min_value=0, max_value=max(net.prefixlen - 1, 0)))
        addr ^= 1 << (width - 1 - pos)
    return addr


def _range_of(addr: int, version: int) -> ipaddress._BaseNetwork | None:  # type: ignore[name-defined]
    """The most specific kept range holding addr."""
    ip = ipaddress.ip_address(addr) if version == 4 else ipaddress.IPv6Address(addr)
    best = None
    for net, _ in SPECIAL4 if version == 4 else SPECIAL6:
        if ip in net and (best is None or net.prefixlen > best.prefixlen):
            best = net
    return best


def test_reference_vectors_of_the_crypto_pan_paper_key() -> None:
    # The vectors yacryptopan (and pycryptopan before it) document for the key bytes 0..31.
    p = IpPseudonymizer(KEY, keep_special=False)
    assert p.address("192.0.2.1") == "2.90.93.17"
    assert p.address("2001:db8::1") == "dd92:2c44:3fc0:ff1e:7ff9:c7f0:8180:7e00"


@settings(max_examples=150, deadline=None)
@given(a4=v4, a6=v6)
def test_batched_crypto_pan_equals_yacryptopan(a4: int, a6: int) -> None:
    cp = _CryptoPAn(KEY)
    assert a4 ^ cp.flips(a4, 4) == cp.reference(a4, 4)
    assert a6 ^ cp.flips(a6, 6) == cp.reference(a6, 6)


@pytest.mark.parametrize("keep", [False, True])
@settings(max_examples=200, deadline=None)
@given(a=st.one_of(v4, near_special(4)), b=st.one_of(v4, near_special(4)))
def test_ipv4_prefix_relations_survive(keep: bool, a: int, b: int) -> None:
    p = IpPseudonymizer(KEY, keep_special=keep)
    pa, pb = p.map_int(a, 4), p.map_int(b, 4)
    assert common_prefix_len(pa, pb, 32) == common_prefix_len(a, b, 32)


@pytest.mark.parametrize("keep", [False, True])
@settings(max_examples=100, deadline=None)
@given(a=v6, shared=st.integers(min_value=0, max_value=128), tail=v6)
def test_ipv6_prefix_relations_survive(keep: bool, a: int, shared: int, tail: int) -> None:
    # b shares `shared` leading bits with a (random pairs almost never share many).
    mask = ((1 << shared) - 1) << (128 - shared) if shared else 0
    b = (a & mask) | (tail & ~mask & (2**128 - 1))
    p = IpPseudonymizer(KEY, keep_special=keep)
    pa, pb = p.map_int(a, 6), p.map_int(b, 6)
    assert common_prefix_len(pa, pb, 128) == common_prefix_len(a, b, 128)


@settings(max_examples=150, deadline=None)
@given(base=v4, bits=st.integers(min_value=1, max_value=31))
def test_a_subnet_maps_onto_one_subnet(base: int, bits: int) -> None:
    """All addresses of a /n land in one /n, distinct: prefix preservation makes subnets subnets."""
    p = IpPseudonymizer(KEY)
    host = 32 - bits
    net = base >> host << host
    members = [net | (i * 2654435761 % (1 << host)) for i in range(min(64, 1 << host))]
    mapped = {p.map_int(m, 4) for m in members}
    assert len(mapped) == len(set(members))  # injective
    assert len({m >> host for m in mapped}) == 1


@settings(max_examples=400, deadline=None)
@given(a=st.one_of(v4, near_special(4)))
def test_kept_ranges_ipv4_stay_and_others_never_enter(a: int) -> None:
    p = IpPseudonymizer(KEY, keep_special=True)
    out = p.map_int(a, 4)
    assert _range_of(out, 4) == _range_of(a, 4)
    rng = _range_of(a, 4)
    if rng is not None and dict(SPECIAL4)[rng] == "verbatim":
        assert out == a


@settings(max_examples=300, deadline=None)
@given(a=st.one_of(v6, near_special(6)))
def test_kept_ranges_ipv6_stay_and_others_never_enter(a: int) -> None:
    p = IpPseudonymizer(KEY, keep_special=True)
    out = p.map_int(a, 6)
    assert _range_of(out, 6) == _range_of(a, 6)


@pytest.mark.parametrize(
    "net",
    [
        "10.0.0.0/8",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "169.254.0.0/16",
        "100.64.0.0/10",
        "192.0.2.0/24",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "fc00::/7",
        "fe80::/10",
        "2001:db8::/32",
    ],
)
def test_special_ranges_are_kept_but_their_hosts_are_pseudonymized(net: str) -> None:
    network = ipaddress.ip_network(net)
    p = IpPseudonymizer(KEY)
    samples = [network.network_address + i for i in (1, 2, 77, 200)]
    outs = [ipaddress.ip_address(p.address(str(s))) for s in samples]  # type: ignore[arg-type]
    assert all(o in network for o in outs)
    assert sum(o != s for o, s in zip(outs, samples)) >= 3


@pytest.mark.parametrize(
    "addr",
    [
        "127.0.0.1",
        "127.8.9.10",
        "0.0.0.0",
        "255.255.255.255",
        "224.0.0.251",
        "239.255.255.250",
        "::1",
        "::",
        "ff02::fb",
    ],
)
def test_verbatim_addresses(addr: str) -> None:
    assert IpPseudonymizer(KEY).address(addr) == addr


def test_without_special_ranges_private_addresses_move() -> None:
    p = IpPseudonymizer(KEY, keep_special=False)
    outs = [ipaddress.ip_address(p.address(f"10.0.0.{i}")) for i in range(1, 20)]  # type: ignore[arg-type]
    assert not all(o in ipaddress.ip_network("10.0.0.0/8") for o in outs)
    assert p.address("127.0.0.1") != "127.0.0.1"


def test_ipv4_mapped_and_nat64_embed_the_ipv4_pseudonym() -> None:
    p = IpPseudonymizer(KEY)
    v4 = p.address("10.20.1.15")
    assert p.address("::ffff:10.20.1.15") == f"::ffff:{v4}"
    assert p.address("64:ff9b::10.20.1.15") == f"64:ff9b::{v4}"
    assert ipaddress.ip_address(p.address("::ffff:a14:10f")) == ipaddress.ip_address(f"::ffff:{v4}")  # type: ignore[arg-type]


def test_notations() -> None:
    p = IpPseudonymizer(KEY)
    out = p.address("fe80::1%eth0")
    assert (
        out is not None
        and out.endswith("%eth0")
        and ipaddress.ip_address(out.split("%")[0]) in ipaddress.ip_network("fe80::/10")
    )
    assert p.address("2001:DB8::1") == p.address("2001:0db8:0000:0000:0000:0000:0000:0001")
    assert p.address("not an address") is None
    assert p.address("10.0.0.256") is None


def test_networks_and_globs_keep_their_meaning() -> None:
    p = IpPseudonymizer(KEY)
    net = p.network("10.20.1.0", 24)
    assert net is not None and net.endswith(".0/24")
    assert ipaddress.ip_address(p.address("10.20.1.15")) in ipaddress.ip_network(net)  # type: ignore[arg-type]
    host_net = p.network("10.20.1.15", 24)
    assert host_net == f"{p.address('10.20.1.15')}/24"
    glob = p.octet_glob([185, 220, 101])
    assert glob.endswith(".*") and p.address("185.220.101.47").startswith(glob[:-1])  # type: ignore[union-attr]
    assert p.network("10.0.0.0", 33) is None


def test_two_keys_give_unrelated_addresses() -> None:
    a, b = IpPseudonymizer(KEY, keep_special=False), IpPseudonymizer(OTHER, keep_special=False)
    addrs = [f"203.0.{i}.{j}" for i in range(4) for j in range(1, 60, 7)]
    same = sum(a.address(x) == b.address(x) for x in addrs)
    assert same == 0
    # Nor is one key's output a shifted or xored copy of the other's.
    xors = {int(ipaddress.ip_address(a.address(x))) ^ int(ipaddress.ip_address(b.address(x))) for x in addrs}  # type: ignore[arg-type]
    assert len(xors) > len(addrs) // 2


def test_rejects_a_wrong_key_length() -> None:
    with pytest.raises(ValueError):
        IpPseudonymizer(b"short")


@given(st.integers(min_value=0, max_value=(1 << 24) - 1))
@settings(max_examples=300, deadline=None)
def test_a_subnets_broadcast_address_stays_one(prefix24: int) -> None:
    """x.y.z.255 keeps its last octet (NetBIOS and discovery broadcasts stay recognisable), and the
    /24 still maps onto one /24, one to one."""
    p = IpPseudonymizer(KEY)
    outs = {p.map_int((prefix24 << 8) | last, 4) for last in range(256)}
    assert len(outs) == 256 and len({o >> 8 for o in outs}) == 1
    broadcast = ipaddress.ip_address((prefix24 << 8) | 255)
    in_kept_24 = any(broadcast in ipaddress.ip_network(r.network) and ipaddress.ip_network(r.network).prefixlen >= 24
                     for r in SPECIAL_V4)  # fmt: skip
    assert p.map_int(int(broadcast), 4) & 0xFF == 255 or in_kept_24
