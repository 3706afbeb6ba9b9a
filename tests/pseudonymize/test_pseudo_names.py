"""Name pseudonyms: one keyed function for every kind, domains label by label keeping the public suffix."""

from __future__ import annotations

import socket

import pytest

from pytest_soclab.pseudonymize import Pseudonymizer
from pytest_soclab.pseudonymize.names import Names, public_suffix

KEY = b"names-test-key-0123456789"


@pytest.fixture
def p() -> Pseudonymizer:
    return Pseudonymizer(KEY)


def test_public_suffix_comes_from_the_bundled_snapshot_without_network(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import tldextract

    from pytest_soclab.pseudonymize import names

    def no_network(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("tldextract tried to reach the network")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    names._tld_extractor.cache_clear()
    try:
        assert public_suffix("a.b.example.co.uk") == "co.uk"
        assert public_suffix("alice.github.io") == "github.io"  # the PSL's private section counts
        assert public_suffix("corp.local") == ""
        ex = names._tld_extractor()
        assert isinstance(ex, tldextract.TLDExtract)
        assert tuple(ex.suffix_list_urls) == () and not ex._cache.enabled  # no fetch, no disk cache
    finally:
        names._tld_extractor.cache_clear()


def test_a_name_maps_the_same_whatever_its_case_or_kind(p: Pseudonymizer) -> None:
    p.learn_host("web-01")
    p.learn_user("alice")
    host = p.text("web-01")
    # A numbered name keeps its number (siblings stay siblings); the stem is replaced.
    assert host.startswith("p") and host.endswith("-01") and len(host) == 13 and "web" not in host
    assert p.text("WEB-01") == host.upper()
    assert p.text("Web-01") == host
    # The same token is the same pseudonym as a user, a host, a label or an e-mail local part.
    assert p.name("alice") == p.text("alice")
    p.learn_domain("alice.example.org")
    assert p.text("alice.example.org") == f"{p.name('alice')}.example.org"


def test_domains_keep_their_public_suffix_label_by_label(p: Pseudonymizer) -> None:
    p.learn_domain("web-01.corp.acme-widgets.co.uk")
    out = p.text("web-01.corp.acme-widgets.co.uk")
    labels = out.split(".")
    assert labels[-2:] == ["co", "uk"]
    assert labels[:3] == [p.name("web-01"), p.name("corp"), p.name("acme-widgets")]
    # The registrable domain is known too: its other subdomains are hidden in free text.
    assert p.text("mail.acme-widgets.co.uk").split(".")[:2] == [p.name("mail"), p.name("acme-widgets")]
    # A private-section suffix is kept: only the user-chosen label changes.
    p.learn_domain("alice.github.io")
    assert p.text("alice.github.io") == f"{p.name('alice')}.github.io"


def test_special_use_and_documentation_domains(p: Pseudonymizer) -> None:
    p.learn_host("dc01.corp.local")
    assert p.text("dc01.corp.local") == f"{p.name('dc01')}.{p.name('corp')}.local"
    assert p.text("srv.home.arpa") == f"{p.name('srv')}.home.arpa"
    assert p.text("host1.example.com") == f"{p.name('host1')}.example.com"
    assert p.text("_ldap._tcp.dc._msdcs.corp.local").startswith("_ldap._tcp.")


def test_keep_domains_option() -> None:
    p = Pseudonymizer(KEY, keep_domains=["microsoft.com"])
    p.learn_domain("login.microsoft.com")
    assert p.text("login.microsoft.com") == f"{p.name('login')}.microsoft.com"
    assert p.text("microsoft.com") == "microsoft.com"


def test_unknown_domains_in_text_are_hidden_by_their_form(p: Pseudonymizer) -> None:
    out = p.text("beacon to update.bad-actor.ru and cdn.bad-actor.ru")
    assert "bad-actor" not in out and out.count(f".{p.name('bad-actor')}.ru") == 2


@pytest.mark.parametrize(
    "word",
    [
        "payload.sh",
        "stage2.py",
        "id_rsa.pub",
        "archive.zip",
        "README.md",
        "System.Net.WebClient",
        "Microsoft.PowerShell.Management",
        "host.name",
        "user.email",
        "url.domain",
        "dns.question.name",
        "logs-endpoint.events.process-default",
        "subprocess.run",
        "libc.so.6",
        "v1.2.3",
    ],
)
def test_files_code_and_field_names_are_not_domains(p: Pseudonymizer, word: str) -> None:
    assert p.text(word) == word


def test_a_known_name_inside_a_file_name_or_a_longer_word(p: Pseudonymizer) -> None:
    p.learn_host("web-01")
    p.learn_user("alice")
    w, a = p.name("web-01"), p.name("alice")
    assert p.text("web-01.log") == f"{w}.log"
    assert p.text("backup-web-01-2024.tar.gz") == f"backup-{w}-2024.tar.gz"
    assert p.text("alice_notes.txt") == f"{a}_notes.txt"
    assert p.text("malice") == "malice"  # a word that merely contains the name is not the name


def test_well_known_accounts_and_protocol_words_are_kept(p: Pseudonymizer) -> None:
    for account in ["root", "SYSTEM", "NT AUTHORITY\\SYSTEM", "www-data", "Administrator", "git"]:
        p.learn_user(account)
    for word in ["root", "SYSTEM", "www-data", "Administrator", "tcp", "dns", "ssh"]:
        assert p.text(word) == word
    assert not p.known.bare


def test_user_forms(p: Pseudonymizer) -> None:
    p.learn_user("ACME\\bob.smith")
    p.learn_user("carol@acme-widgets.com")
    p.learn_user("WS-FIN-07$")
    p.learn_user("Dave Jones")
    for token in ["acme", "bob.smith", "carol", "ws-fin-07", "dave", "jones"]:
        assert token in p.known.bare
    assert "acme-widgets.com" in p.known.domains
    assert p.text("ACME\\bob.smith") == f"{p.name('ACME')}\\{p.name('bob.smith')}"
    assert p.text("WS-FIN-07$") == p.name("WS-FIN-07") + "$"


def test_reverse_dns_names_carry_the_address_pseudonym(p: Pseudonymizer) -> None:
    out = p.text("47.101.220.185.in-addr.arpa")
    assert out == ".".join(reversed(p.ip("185.220.101.47").split("."))) + ".in-addr.arpa"
    v6 = "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa"
    mapped = p.text(v6)
    import ipaddress

    nibbles = ipaddress.IPv6Address(p.ip("2001:db8::1")).exploded.replace(":", "")
    assert mapped == ".".join(reversed(nibbles)) + ".ip6.arpa"


def test_aws_style_host_names_hide_the_address(p: Pseudonymizer) -> None:
    out = p.text("ip-10-20-1-15.ec2.internal")
    assert out.startswith("ip-" + p.ip("10.20.1.15").replace(".", "-") + ".")


def test_pseudonyms_depend_on_the_key_only() -> None:
    a, b = Names(b"k" * 32), Names(b"j" * 32)
    tokens = [f"host-{i}" for i in range(200)]
    pa = {a.pseudonym(t) for t in tokens}
    pb = {b.pseudonym(t) for t in tokens}
    assert len(pa) == len(pb) == 200
    assert not pa & pb
    # Processing order does not matter.
    c = Names(b"k" * 32)
    assert [c.pseudonym(t) for t in reversed(tokens)] == [a.pseudonym(t) for t in reversed(tokens)]


@pytest.mark.parametrize(
    "name",
    [
        "logs-endpoint.events.process-default",
        "logs-system.auth",
        ".alerts-security.alerts-default",
        "logs-ti_abusech.url-default",
        ".ds-logs-zeek.dns-default-2024.05.01-000001",
        "logs-okta.system-default",
    ],
)
def test_data_stream_and_index_names_are_kept(p: Pseudonymizer, name: str) -> None:
    assert p.text(name) == name


def test_an_internal_zone_names_the_organisation(p: Pseudonymizer) -> None:
    p.learn_host("dc-01.brewline.internal")
    p.learn_domain("shop.brewline.example")
    assert (
        p.text("A sample of Brewline customer records")
        == f"A sample of {p.name('brewline')} customer records"
    )
    p.learn_domain("api.stripe.com")  # a public registrable domain is a domain, not a word of prose
    assert p.text("a stripe of paint") == "a stripe of paint"
