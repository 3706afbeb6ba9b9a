"""Variants of a case: every entity re-keyed and every date shifted, under a key derived from K.

`--soclab-variant=K` (K > 0) runs each case and its tasks as variant K: the pseudonymizer, keyed by
`variant_key(K)`, replaces hosts, users, domains, addresses, hashes and the file and process names
the intruder made up (pseudonymize/artifacts.py; correlation kept: the same entity gets the same pseudonym in the documents, the
trigger, the answer key and the planted documents), and every date moves by `offset_days(K)` whole
weeks into the past, so that times of day, weekdays and the order of events are kept. K = 0 is the
case as recorded or generated. Anyone can rebuild variant K from K: publish a fresh K per release,
after the results, and a model that memorised an earlier release's answers gains nothing.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from datetime import date, timedelta
from typing import Any

from pytest_soclab.pseudonymize.artifacts import ArtifactNames
from pytest_soclab.pseudonymize.pseudonymizer import Pseudonymizer

_LABEL = b"pytest-soclab case variant v1:"
# What a variant's documents are, for the cache key: bump it whenever the same K would give other
# documents. 2: subnet broadcast addresses kept, product accounts keep their prefix, per-user
# installs' and hash-named files' names kept, prose "for X" and PowerShell's HostName= no longer
# names, LocalSystem kept. 3: public platforms' domains kept.
VARIANT_FORMAT = 3
# Public platforms whose identity is the point (a payload fetched from code hosting or a cloud bucket): a
# variant re-keys the case's estate, not the internet's landmarks. Their subdomain labels are still
# re-keyed (a bucket's or a user's name), like any kept domain; most of the platforms' own suffixes
# (githubusercontent.com, s3.amazonaws.com) are public suffixes already.
PUBLIC_PLATFORMS = ("github.com", "gitlab.com", "bitbucket.org", "amazonaws.com", "cloudfront.net", "googleapis.com",
                    "azureedge.net", "akamaihd.net", "fastly.net", "dropbox.com", "sharepoint.com", "discordapp.com")
_DATE = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?=T|\b|\s|$)")
_DOTTED_DATE = re.compile(r"(?<!\d)(\d{4})\.(\d{2})\.(\d{2})(?!\d)")  # backing index names: 2024.05.14


# Fields of a scenario that name no entity (ids, labels, tool names, states).
_SCENARIO_KEEP = frozenset({"id", "family", "severity", "case", "techniques", "allowed_tools", "max_tool_calls", "tags"})
_ESTATE_KEEP = frozenset({"os", "os_name", "role", "kind", "schedule", "state", "entity_id", "tags"})
_ORACLE_KEEP = frozenset({"predicate", "tool", "state", "enabled", "wiped", "isolated", "blocked", "present", "max", "min"})


def _strings(value: Any) -> Iterator[str]:
    """Every string inside a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def variant_key(k: int) -> bytes:
    """The pseudonymizer's key for variant K (K > 0): a public derivation, so K names the variant."""
    return hashlib.sha256(_LABEL + str(int(k)).encode()).digest()


def offset_days(k: int) -> int:
    """Variant K's date shift: 8 to 207 whole weeks into the past (weekdays and times of day kept)."""
    if k == 0:
        return 0
    n = int.from_bytes(hashlib.sha256(b"offset:" + variant_key(k)).digest()[:4], "big")
    return -7 * (8 + n % 200)


def _shift_match(m: re.Match[str], days: int, sep: str) -> str:
    try:
        d = date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return m.group(0)
    return (d + timedelta(days=days)).strftime(f"%Y{sep}%m{sep}%d")


def shift_text(s: str, days: int) -> str:
    """Dates in `s` (ISO `2024-05-14`, with or without a time, and `2024.05.14`) moved by `days`."""
    if not days or not any(c.isdigit() for c in s):
        return s
    s = _DATE.sub(lambda m: _shift_match(m, days, "-"), s)
    return _DOTTED_DATE.sub(lambda m: _shift_match(m, days, "."), s)


def shift_json(value: Any, days: int) -> Any:
    """Every string of a JSON value with its dates moved (keys are kept)."""
    if not days:
        return value
    if isinstance(value, str):
        return shift_text(value, days)
    if isinstance(value, dict):
        return {k: shift_json(v, days) for k, v in value.items()}
    if isinstance(value, list):
        return [shift_json(v, days) for v in value]
    return value


class Variant:
    """Variant K of one case: learn its documents (and tasks) first, then transform them."""

    def __init__(self, k: int) -> None:
        if k < 1:
            raise ValueError("variant 0 is the case itself: nothing to transform")
        self.k = k
        self.days = offset_days(k)
        self.p = Pseudonymizer(variant_key(k), keep_domains=PUBLIC_PLATFORMS)

    def learn(self, docs: Iterable[dict[str, Any]]) -> None:
        artifacts = ArtifactNames()

        def read(docs: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
            for doc in docs:
                artifacts.learn(doc)
                yield doc

        self.p.learn_documents(read(docs))
        # the intruder's own file names (pseudonymize/artifacts.py): only a variant re-keys them
        for name in sorted(artifacts.names):
            self.p.learn_name(name)

    def load_known(self, data: dict[str, Any]) -> None:
        self.p.load_known(data, origin=f"variant {self.k}")

    def export_known(self) -> dict[str, Any]:
        return self.p.export_known()

    def document(self, doc: dict[str, Any]) -> dict[str, Any]:
        return shift_json(self.p.document(doc, learn=False), self.days)

    def documents(self, triples: Iterable[tuple[str, str, dict[str, Any]]]) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """(stream, id, doc) as the generator yields them, transformed (learn them all first)."""
        for stream, doc_id, doc in triples:
            yield stream, self.p.text(doc_id), self.document(doc)

    def task(self, task: dict[str, Any]) -> dict[str, Any]:
        """A task (or scenario) as JSON: answer key, trigger, planted documents and oracles alike."""
        self.p.learn_task(task)
        return shift_json(self.p.task(task, learn=False), self.days)

    def scenario(self, data: dict[str, Any]) -> dict[str, Any]:
        """An ATK or BEN scenario as JSON, its planted documents complete: trigger, prose, planted
        documents, oracles and action references alike (learn the case's names first)."""
        p = self.p
        self._learn_scenario(data)
        out: dict[str, Any] = {}
        for key, value in data.items():
            if key in _SCENARIO_KEEP:
                out[key] = value
            elif key == "trigger" and isinstance(value, dict):
                out[key] = p.task({"trigger": value}, learn=False)["trigger"]
            elif key == "planted" and isinstance(value, list):
                out[key] = [self._planted(x) for x in value]
            elif key == "oracles" and isinstance(value, list):
                out[key] = [self._oracle(o) for o in value]
            elif key in ("legit_actions", "forbidden_actions") and isinstance(value, list):
                out[key] = p.task({"expected_response": {"required_actions": value}}, learn=False)[
                    "expected_response"]["required_actions"]  # fmt: skip
            elif isinstance(value, str):
                out[key] = p.text(value)
            else:
                out[key] = p.json(value, learn=False)
        return shift_json(out, self.days)

    def estate(self, data: dict[str, Any]) -> dict[str, Any]:
        """An estate as JSON (hosts, their addresses, processes, files and persistence, users,
        zones, protected addresses) with the variant's names; tiers, roles and tags are kept."""

        for text in _strings(data):  # the case's names are known as digests: match them first
            self.p.learn_text(text)

        def walk(value: Any, key: str = "") -> Any:
            if isinstance(value, dict):
                return {k: walk(v, k) for k, v in value.items()}
            if isinstance(value, list):
                return [walk(v, key) for v in value]
            if isinstance(value, str) and key not in _ESTATE_KEEP:
                return self.p.ip_or_text(value) if key in ("ips", "business_critical_ips", "blocked_ips") else self.p.text(value)
            return value

        return shift_json(walk(data), self.days)

    def _learn_scenario(self, data: dict[str, Any]) -> None:
        """Its names: the case's (known as keyed digests, matched as they are met) and its own (an
        attacker's domain in a planted document), so that every part of it agrees."""
        p = self.p
        p.learn_task({k: data[k] for k in ("title", "description", "trigger") if k in data})
        for planted in data.get("planted") or []:
            if isinstance(planted, dict) and isinstance(planted.get("doc"), dict):
                p.learn_document(planted["doc"])
        for key in ("oracles", "legit_actions", "forbidden_actions", "goal", "vector"):
            for text in _strings(data.get(key)):
                p.learn_text(text)

    def _planted(self, planted: Any) -> Any:
        if not isinstance(planted, dict) or not isinstance(planted.get("doc"), dict):
            return planted
        out = {**planted, "doc": self.p.document(planted["doc"], learn=False)}
        if isinstance(planted.get("id"), str):
            out["id"] = self.p.text(planted["id"])
        return out

    def _oracle(self, oracle: Any) -> Any:
        """Every string an oracle checks (host, user, ip, path, name, terms, tool arguments) as the
        variant names it; `pattern` is a regular expression, so it is transformed as one."""
        if isinstance(oracle, dict):
            out: dict[str, Any] = {}
            for key, value in oracle.items():
                if key in _ORACLE_KEEP:
                    out[key] = value
                elif key == "pattern" and isinstance(value, str):
                    out[key] = self.p.regex(value)
                else:
                    out[key] = self._oracle(value)
            return out
        if isinstance(oracle, list):
            return [self._oracle(v) for v in oracle]
        if isinstance(oracle, str):
            return self.p.text(oracle)
        return oracle

    def json(self, obj: Any) -> Any:
        return shift_json(self.p.json(obj), self.days)

    def text(self, s: str) -> str:
        return shift_text(self.p.text(s), self.days)
