"""`Pseudonymizer`: one key, one consistent mapping for corpora, tasks, evidence, transcripts and results.

Two steps, so that the output does not depend on the order of the inputs:

1. learn: every input is read once for the names its typed fields and text patterns reveal
   (`learn_document`, `learn_task`, `learn_json`, `learn_text`);
2. transform: `document`, `task`, `json`, `text`, `ip` (each learns its own input first, by
   default, so that a single call is consistent with itself).

The pseudonym of an entity is a pure function of the key and the entity; which tokens of free
text are entities is a function of everything learned. Learn from all the inputs of a release
before transforming any of them (`pseudonymize_paths` in files.py does).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from pytest_soclab.errors import SoclabError
from pytest_soclab.gcpause import collector_paused
from pytest_soclab.pseudonymize.documents import DocumentWalker
from pytest_soclab.pseudonymize.identifiers import MacPseudonymizer, SidPseudonymizer
from pytest_soclab.pseudonymize.ip import IpPseudonymizer
from pytest_soclab.pseudonymize.keys import KEY_ENV_VAR, check_key, derive, key_id, load_key
from pytest_soclab.pseudonymize.names import KnownNames, Names
from pytest_soclab.pseudonymize.tasks import TaskCodec
from pytest_soclab.pseudonymize.text import TextPseudonymizer


# Pseudonymized documents are trees of dicts and lists: no cycles for the collector to find,
# yet on CPython 3.11 its scans of them cost two thirds of a bulk run (bench/pseudonymize_bench.py).
bulk = collector_paused


KNOWN_FORMAT = 1


class Pseudonymizer:
    """Keyed, deterministic, correlation-preserving pseudonymization.

    Options:
      keep_special_ranges: private, loopback, link-local, documentation... addresses stay in their
        range (see ip.SPECIAL_V4 / SPECIAL_V6); False gives plain Crypto-PAn.
      keep_domains: registrable domains kept as they are (their subdomain labels are still replaced).
      keep_users: account names kept, in addition to the well-known system accounts.
      drop_geo: remove `*.geo` and `*.as` objects (they describe the original address).
    """

    def __init__(
        self,
        key: bytes | str,
        *,
        keep_special_ranges: bool = True,
        keep_domains: Iterable[str] = (),
        keep_users: Iterable[str] = (),
        drop_geo: bool = False,
    ):
        secret = check_key(key.encode("utf-8") if isinstance(key, str) else bytes(key))
        self.key_id = key_id(secret)
        self.keep_special_ranges = keep_special_ranges
        self.keep_domains = tuple(sorted({d.lower().strip(".") for d in keep_domains}))
        self.keep_users = tuple(sorted({u.lower() for u in keep_users}))
        self.drop_geo = drop_geo
        self.ips = IpPseudonymizer(derive(secret, "crypto-pan", 32), keep_special=keep_special_ranges)
        known = KnownNames(keep=self.keep_users, digest_key=derive(secret, "known-names"))
        self.names = Names(derive(secret, "names"), known=known, keep_domains=self.keep_domains)
        self.names.ip_hook = self.ips.address
        self.macs = MacPseudonymizer(derive(secret, "mac"))
        self.sids = SidPseudonymizer(derive(secret, "sid"))
        self.texts = TextPseudonymizer(self.names, self.ips, self.macs, self.sids)
        self.walker = DocumentWalker(self.texts, self.ips, self.names, drop_geo=drop_geo)
        self.tasks = TaskCodec(self.walker, self.texts)

    @classmethod
    def from_key_file(cls, path: str | os.PathLike[str], **options: Any) -> Pseudonymizer:
        return cls(load_key(path), **options)

    @classmethod
    def from_env(cls, env: str = KEY_ENV_VAR, **options: Any) -> Pseudonymizer:
        return cls(load_key(None, env), **options)

    def options(self) -> dict[str, Any]:
        return {
            "keep_special_ranges": self.keep_special_ranges,
            "keep_domains": list(self.keep_domains),
            "keep_users": list(self.keep_users),
            "drop_geo": self.drop_geo,
        }

    @property
    def known(self) -> KnownNames:
        return self.names.known

    # ---------------------------------------------------------------- memory across runs

    def export_known(self) -> dict[str, Any]:
        """What this instance learned (and remembers), as keyed digests: no name in clear.

        Load it in a later run (`load_known`) and the names an earlier run learned are recognised
        in free text even when the later inputs do not reveal them.
        """
        bare, domains = self.known.digests()
        return {"format": KNOWN_FORMAT, "key_id": self.key_id, "names": bare, "domains": domains}

    def load_known(self, data: dict[str, Any], origin: str = "known names") -> None:
        if not isinstance(data, dict) or data.get("format") != KNOWN_FORMAT:
            raise SoclabError(f"{origin}: not a soclab known-names file (format {KNOWN_FORMAT})")
        if data.get("key_id") != self.key_id:
            raise SoclabError(
                f"{origin}: made with another key (key id {data.get('key_id')}, this key is {self.key_id})"
            )
        names, domains = data.get("names", []), data.get("domains", [])
        if not all(isinstance(x, str) for x in [*names, *domains]):
            raise SoclabError(f"{origin}: names and domains must be lists of digests")
        self.known.remember(names, domains)
        self.texts.forget_learned()  # values read before must be probed again
        self.walker.forget_learned()

    # ---------------------------------------------------------------- learning

    def learn_document(self, doc: dict[str, Any]) -> None:
        self.walker.learn_doc(doc)

    def learn_documents(self, docs: Iterable[dict[str, Any]]) -> None:
        learn = self.walker.learn_doc
        for doc in docs:
            learn(doc)

    def learn_task(self, task: dict[str, Any]) -> None:
        self.tasks.learn(task)

    def learn_json(self, obj: Any) -> None:
        self.walker.learn_json(obj)

    def learn_text(self, s: str) -> None:
        self.texts.learn(s)

    def learn_host(self, name: str) -> None:
        self.names.learn_domain(name, host=True)

    def learn_user(self, name: str) -> None:
        self.names.learn_user(name)

    def learn_domain(self, name: str) -> None:
        self.names.learn_domain(name)

    def learn_name(self, token: str) -> None:
        """A bare name (no dots or spaces) to replace wherever it stands as a word: a file's stem."""
        self.names.learn_bare(token)

    # ---------------------------------------------------------------- transform

    def document(self, doc: dict[str, Any], learn: bool = True, in_place: bool = False) -> dict[str, Any]:
        """A pseudonymized copy of one ECS document (`_source`); with in_place, `doc` itself, changed."""
        if learn:
            self.walker.learn_doc(doc)
        return self.walker.doc_in_place(doc, done=set()) if in_place else self.walker.doc(doc)

    def documents(
        self, docs: Iterable[dict[str, Any]], learn: bool = True, in_place: bool = False, shared: bool = True
    ) -> list[dict[str, Any]]:
        """Learn from all, then transform all: the result does not depend on their order.

        in_place=True changes the given documents instead of copying them (for documents the
        caller owns, e.g. just parsed from a file): faster. shared=False promises that no object
        appears twice among them (true of parsed JSON), which skips the check that would
        otherwise change such an object only once.
        """
        docs = list(docs)
        with bulk():
            if learn and in_place and not shared and not self.drop_geo:
                # One walk: learning notes where the strings are, the transformation visits only them.
                self.walker.learn_marking(docs)
                self.walker.transform_marked()
                return docs
            if learn:
                self.learn_documents(docs)
            if in_place:
                done: set[int] | None = set() if shared else None  # shared objects are changed once
                return [self.walker.doc_in_place(d, done=done) for d in docs]
            transform = self.walker.doc
            return [transform(d) for d in docs]

    def task(self, task: dict[str, Any], learn: bool = True) -> dict[str, Any]:
        """A pseudonymized copy of a task dict (tasks/task-NN.json), still valid against models.task.Task."""
        if learn:
            self.tasks.learn(task)
        return self.tasks.transform(task)

    def json(self, obj: Any, learn: bool = True) -> Any:
        """Any JSON value: transcripts, results, evidence files, search responses."""
        if learn:
            self.walker.learn_json(obj)
        return self.walker.json(obj)

    def text(self, s: str, learn: bool = False) -> str:
        """Free text: addresses and every learned name replaced, token by token."""
        if learn:
            self.texts.learn(s)
        return self.texts.text(s)

    def regex(self, pattern: str) -> str:
        return self.texts.regex(pattern)

    def ip(self, address: str) -> str:
        """The pseudonym of one IP address (ValueError when it is not one)."""
        out = self.ips.address(address)
        if out is None:
            raise ValueError(f"not an IP address: {address!r}")
        return out

    def ip_or_text(self, value: str) -> str:
        return self.texts.ip_or_text(value)

    def host(self, name: str) -> str:
        """The pseudonym of a host name (learned as one first)."""
        self.learn_host(name)
        return self.texts.text(name)

    def user(self, name: str) -> str:
        self.learn_user(name)
        return self.texts.text(name)

    def domain(self, name: str) -> str:
        self.learn_domain(name)
        return self.texts.text(name)

    def name(self, token: str) -> str:
        """The pseudonym of any name token, whether learned or not (what a learned token becomes)."""
        return self.names.shaped(token)
