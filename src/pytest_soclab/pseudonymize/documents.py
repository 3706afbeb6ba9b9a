"""ECS documents: which field holds which kind of entity, and the walkers that learn and transform.

A field's kind comes from its dotted path (nested objects and dotted keys alike):
`source.ip` is an address, `host.name` a host, `user.name` a user, `dns.question.name`
a domain, `process.command_line` free text, `file.hash.sha256` and
`threat.technique.id` are kept. What a kind changes:

- learning: typed fields teach the names that free text will then hide;
- transforming: almost every string goes through the one text transformation (so a
  value is pseudonymized the same whether it sits in its field or inside a message);
  kept fields are copied; `dns.question.subdomain` has every label replaced.

Unknown fields are free text: only addresses and learned names in them change.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cache
from typing import TYPE_CHECKING, Any

from pytest_soclab.pseudonymize.shapes import (
    COMPILE_AFTER,
    MAX_PLANS_PER_FIELD,
    compile_copy,
    compile_in_place,
    compile_learn,
    compile_mark,
)
from pytest_soclab.models.reference import ecs_fields

if TYPE_CHECKING:
    from pytest_soclab.pseudonymize.pseudonymizer import Pseudonymizer

# Kinds (small ints: compared in the hot loop).
KEEP, TEXT, IP, HOST, DOMAIN, USER, EMAIL, FULL_NAME, ADDRESS, URL, LABELS, SECRET, DROP = range(13)
KIND_NAMES = (
    "keep",
    "text",
    "ip",
    "host",
    "domain",
    "user",
    "email",
    "full_name",
    "address",
    "url",
    "labels",
    "secret",
    "drop",
)

_KEEP_EXACT = frozenset(
    """
    @timestamp _index _id _score _version _seq_no _primary_term _routing _ignored data_stream ecs
    agent.type agent.version agent.id agent.ephemeral_id agent.build.original host.id host.architecture
    host.type host.os.family host.os.kernel host.os.name host.os.platform host.os.type host.os.version
    host.os.full network.protocol network.transport network.type network.direction network.iana_number
    network.community_id network.application log.level log.logger input.type service.type file.extension
    file.type file.mime_type file.attributes dns.question.type dns.question.class
    dns.question.top_level_domain dns.response_code dns.header_flags dns.type dns.op_code dns.id
    dns.answers.type dns.answers.class tls.version tls.version_protocol tls.cipher tls.curve
    http.request.method http.version rule.id rule.uuid rule.version rule.category rule.ruleset
    kibana.alert.rule.uuid kibana.alert.uuid kibana.alert.status kibana.alert.workflow_status
    kibana.alert.severity kibana.alert.risk_score kibana.space_ids kibana.alert.rule.type
    kibana.alert.rule.rule_type_id kibana.alert.rule.producer kibana.alert.rule.consumer
    kibana.alert.rule.severity kibana.alert.rule.risk_score kibana.alert.rule.rule_id kibana.alert.depth
    kibana.alert.original_event.action kibana.alert.original_event.category
    kibana.alert.original_event.dataset kibana.alert.original_event.kind
    kibana.alert.original_event.module kibana.alert.original_event.type kibana.version
    suricata.eve.event_type suricata.eve.app_proto suricata.eve.alert.action suricata.eve.alert.category
    zeek.connection.state zeek.connection.history process.args_count tags.threat.technique
    """.split()
)
_KEEP_PREFIXES = (
    "event.",
    "data_stream.",
    "ecs.",
    "threat.framework",
    "threat.feed.",
    "threat.indicator.type",
    "threat.indicator.marking.",
    "threat.indicator.confidence",
    "threat.indicator.provider",
)
_TEXT_EXCEPTIONS = frozenset({"event.original", "event.reason", "event.url", "event.reference"})
_KEEP_LEAVES = frozenset(
    """
    md5 sha1 sha224 sha256 sha384 sha512 sha3_224 sha3_256 sha3_384 sha3_512 ssdeep tlsh imphash cdhash
    pehash authentihash ja3 ja3s ja4 ja4s hassh hassh_server community_id port entity_id uuid
    signature_id
    """.split()
)
_IP_LEAVES = frozenset(
    {
        "ip",
        "orig_h",
        "resp_h",
        "ipaddress",
        "ip_address",
        "src_ip",
        "dest_ip",
        "dst_ip",
        "client_ip",
        "remote_ip",
        "resolved_ip",
        "forwarded_ip",
        "ips",
        "attacker_ip",
        "attacker_ips",
        "source_ip",
        "destination_ip",
        "local_ip",
        "sourceip",
        "destinationip",
        "remote_addr",
        "remoteaddress",
    }
)
_HOST_LAST2 = frozenset(
    {
        "host.name",
        "host.hostname",
        "observer.name",
        "observer.hostname",
        "agent.name",
        "syslog.hostname",
        "related.hosts",
        "target.hostname",
    }
)
_HOST_LEAVES = frozenset(
    {
        "hostname",
        "computer_name",
        "computername",
        "workstationname",
        "workstation",
        "machinename",
        "machine_name",
        "targetservername",
        "hosts",
        "implicated_hosts",
        "host_name",
        "devicename",
        "device_name",
    }
)
_DOMAIN_LEAVES = frozenset(
    {
        "domain",
        "registered_domain",
        "server_name",
        "sni",
        "fqdn",
        "targetdomainname",
        "subjectdomainname",
        "domain_name",
        "domainname",
        "query",
        "qname",
        "rrname",
        "host",
    }
)
_DOMAIN_EXACT = frozenset(
    {
        "dns.question.name",
        "dns.answers.name",
        "zeek.ssl.server.name",
        "tls.server.x509.subject.common_name",
        "tls.server.x509.alternative_names",
        "tls.client.x509.subject.common_name",
    }
)
_USER_PARENTS = frozenset({"target", "effective", "changes", "entity"})
_USER_LEAVES = frozenset(
    {
        "username",
        "user_name",
        "targetusername",
        "subjectusername",
        "accountname",
        "account_name",
        "samaccountname",
        "user",
        "users",
        "logon_user",
        "targetuser",
        "targetoutboundusername",
        "subjectaccountname",
        "memberName".lower(),
        "owner",
        "uid_name",
        "auid_name",
        "suser",
        "duser",
    }
)
_URL_LEAVES = frozenset({"url", "uri", "referrer", "referer", "href", "full_url"})


@cache
def _ecs_ip_fields() -> frozenset[str]:
    return frozenset(k.lower() for k, v in ecs_fields().items() if v.get("type") == "ip")


@cache
def classify(path: str) -> int:
    """The kind of the field at a dotted path (lower case, array positions omitted)."""
    p = path.lower()
    parts = p.split(".")
    leaf = parts[-1]
    parent = parts[-2] if len(parts) > 1 else ""
    last2 = f"{parent}.{leaf}" if parent else leaf
    if p in _TEXT_EXCEPTIONS:
        return TEXT
    if p in _KEEP_EXACT or p.startswith(_KEEP_PREFIXES) or leaf in _KEEP_LEAVES:
        return KEEP
    if "hash" in parts or "hashes" in parts:
        return KEEP
    if "threat" in parts and ("technique" in parts or "tactic" in parts or "subtechnique" in parts):
        return KEEP
    if leaf in ("geo", "as") or parent in ("geo", "as"):
        return DROP  # the location and network of the *original* address: dropped only with drop_geo
    if leaf == "id" and parent not in ("user", "group", "target", "effective", "changes"):
        return KEEP
    if leaf.endswith("_id") and leaf not in ("user_id", "account_id"):
        return KEEP
    if p in _ecs_ip_fields() or leaf in _IP_LEAVES or leaf.endswith("_ip"):
        return IP
    if last2 in _HOST_LAST2 or p == "host.target.name" or leaf in _HOST_LEAVES:
        return HOST
    if leaf == "host" and (len(parts) == 1 or parent == "args"):
        return HOST  # a tool argument: isolate_host(host=...)
    if leaf == "subdomain":
        return LABELS
    if leaf == "top_level_domain":
        return KEEP
    if p in _DOMAIN_EXACT or (leaf in _DOMAIN_LEAVES and not (leaf == "query" and "dns" not in parts)):
        return DOMAIN
    if leaf == "address" or (leaf in ("data", "answers") and "dns" in parts):
        return EMAIL if "email" in parts else ADDRESS
    if leaf == "email" or leaf == "emails":
        return EMAIL
    if leaf == "full_name":
        return FULL_NAME
    if leaf == "name" and (parent.endswith("user") or (parent in _USER_PARENTS and "user" in parts[:-2])):
        return USER
    if leaf in _USER_LEAVES:
        return USER
    if leaf == "password":
        return SECRET
    if (parent == "url" and leaf in ("original", "full")) or leaf in _URL_LEAVES:
        return URL
    return TEXT


def _copy(value: Any) -> Any:
    """A deep copy of a JSON value (dicts and lists; scalars are immutable)."""
    t = type(value)
    if t is dict:
        return {k: _copy(v) for k, v in value.items()}
    if t is list:
        return [_copy(v) for v in value]
    return value


# Transforming needs fewer distinctions than learning: every name kind is free text by then.
_TRANSFORM_KIND = tuple(k if k in (KEEP, IP, LABELS, DROP) else TEXT for k in range(len(KIND_NAMES)))


class _Node:
    """A position in a document's field tree; children are created (and classified) once."""

    __slots__ = ("children", "kind", "kinds", "path", "plans", "sightings", "tkind", "tkinds")

    def __init__(self, path: str, kind: int):
        self.path = path
        self.kind = kind
        self.tkind = _TRANSFORM_KIND[kind]
        self.children: dict[str, _Node] = {}
        # key -> kind of the child (learning) and what transforming it takes: one lookup in the hot loops
        self.kinds: dict[str, int] = {}
        self.tkinds: dict[str, int] = {}
        # (mode, key tuple) -> compiled walker for objects of that shape here (see shapes.py)
        self.plans: dict[tuple[str, tuple[str, ...]], Callable[[dict[str, Any]], None]] = {}
        self.sightings: dict[tuple[str, tuple[str, ...]], int] = {}

    def child(self, key: str) -> _Node:
        node = self.children.get(key)
        if node is None:
            path = f"{self.path}.{key}" if self.path else key
            node = self.children[key] = _Node(path, classify(path))
            self.kinds[key] = node.kind
            self.tkinds[key] = node.tkind
        return node


class DocumentWalker:
    """Learn from and transform ECS documents, ES search hits, ES|QL responses and generic JSON."""

    def __init__(self, owner: Pseudonymizer):
        self.p = owner
        self.drop_geo = owner.drop_geo
        self.doc_root = _Node("", TEXT)
        self.json_root = _Node("", TEXT)
        self._seen: list[set[str]] = [set() for _ in KIND_NAMES]
        # Bound once: the hot loops run per nested object. (The memo dicts are cleared, never replaced.)
        self._memo_get = owner.texts.memo.get
        self._compute = owner.texts.compute
        self._ip_get = owner.ips.memo_text.get
        # Marks left by `learn_marking`, per transform kind: flat [container, key, container, key...]
        # of the string leaves to transform (cleared, never replaced: compiled walkers bind them).
        self._marks: list[list[Any]] = [[] for _ in KIND_NAMES]

    # ---------------------------------------------------------------- learning

    def learn_value(self, kind: int, v: str) -> None:
        p = self.p
        if kind == TEXT or kind == URL:
            p.texts.learn(v)
        elif kind == KEEP or kind == LABELS or kind == DROP:
            return
        elif kind == IP:
            if p.ips.address(v) is None:
                p.texts.learn(v)
        elif kind == HOST:
            if p.ips.address(v) is None:
                p.names.learn_domain(v, host=True)
                p.texts.learn(v)
        elif kind == DOMAIN:
            if p.ips.address(v) is None:
                p.names.learn_domain(v)
                p.texts.learn(v)
        elif kind == USER:
            p.names.learn_user(v)
        elif kind == EMAIL:
            p.names.learn_email(v)
        elif kind == FULL_NAME:
            p.names.learn_full_name(v)
        elif kind == ADDRESS:
            if p.ips.address(v) is None:
                if "@" in v:
                    p.names.learn_email(v)
                elif "/" in v or "\\" in v or " " in v:
                    p.texts.learn(v)
                else:
                    p.names.learn_domain(v)
        elif kind == SECRET:
            p.names.learn_bare(v)

    def learn_doc(self, doc: dict[str, Any], node: _Node | None = None) -> None:
        self._learn_dict(doc, node or self.doc_root)

    def _learn_new(self, kind: int, v: str) -> None:
        """Learn a value not seen before in this kind (learning is idempotent: each value once)."""
        done = self._seen[kind]
        if len(done) > 1_000_000:
            done.clear()
        done.add(v)
        self.learn_value(kind, v)

    def _learn_dict(self, doc: dict[str, Any], node: _Node) -> None:
        shape = ("learn", tuple(doc))
        plan = node.plans.get(shape)
        if plan is None:
            plan = self._plan(node, shape, compile_learn, doc)
            if plan is None:
                self._learn_doc(doc, node)
                return
        plan(doc)

    def _plan(
        self, node: _Node, shape: tuple[str, tuple[str, ...]], compiler: Any, sample: dict[str, Any]
    ) -> Any:
        seen = node.sightings.get(shape, 0) + 1
        if seen < COMPILE_AFTER or len(node.plans) >= MAX_PLANS_PER_FIELD:
            node.sightings[shape] = seen
            return None
        plan = node.plans[shape] = compiler(self, node, shape[1], sample)
        node.sightings.pop(shape, None)
        return plan

    def _learn_doc(self, doc: dict[str, Any], node: _Node, mark: bool = False) -> None:
        """Learn an object's string leaves (`mark`: also note each one to transform, see
        learn_marking) and descend into its objects and lists."""
        kinds = node.kinds
        seen = self._seen
        marks = self._marks
        learn_dict, learn_list = (self._mark_dict, self._mark_list) if mark else (self._learn_dict, self._learn_list)
        for k, v in doc.items():
            try:
                kind = kinds[k]
            except KeyError:
                kind = node.child(k).kind
            if kind == KEEP:
                continue
            t = type(v)
            if t is str:
                if v not in seen[kind]:
                    self._learn_new(kind, v)
                if mark:
                    m = marks[_TRANSFORM_KIND[kind]]
                    m.append(doc)
                    m.append(k)
            elif t is dict:
                learn_dict(v, node.children[k])
            elif t is list:
                learn_list(v, node.children[k])

    def _learn_list(self, items: list[Any], node: _Node) -> None:
        kind = node.kind
        done = self._seen[kind]
        for v in items:
            t = type(v)
            if t is str:
                if v not in done:
                    self._learn_new(kind, v)
            elif t is dict:
                self._learn_dict(v, node)
            elif t is list:
                self._learn_list(v, node)

    # ---------------------------------------------------------------- learn, marking what to transform

    def learn_marking(self, docs: Iterable[dict[str, Any]]) -> None:
        """Learn documents the caller owns and will transform in place (`transform_marked`), noting
        where their string leaves are: the transformation then visits those leaves alone instead of
        walking the documents again. Objects must not be shared (parsed JSON), and not with drop_geo
        (dropping needs the walk)."""
        learn = self._mark_dict
        root = self.doc_root
        try:
            for doc in docs:
                learn(doc, root)
        except BaseException:
            self.forget_marks()
            raise

    def mark_state(self) -> list[int]:
        """Where the marks stand: `forget_marks(state)` drops those left since."""
        return [len(marks) for marks in self._marks]

    def forget_marks(self, since: list[int] | None = None) -> None:
        for i, marks in enumerate(self._marks):
            del marks[since[i] if since else 0 :]

    def transform_marked(self) -> None:
        """Transform, in place, the leaves `learn_marking` noted (what `doc_in_place` would do)."""
        self.p.texts.sync()
        try:
            for tkind, marks in enumerate(self._marks):
                if marks:
                    self._transform_leaves(tkind, marks)
        finally:
            self.forget_marks()

    def _transform_leaves(self, tkind: int, marks: list[Any]) -> None:
        pairs = iter(marks)
        if tkind == TEXT:
            memo_get = self._memo_get
            compute = self._compute
            for c, k in zip(pairs, pairs):
                v = c[k]
                r = memo_get(v)
                c[k] = compute(v) if r is None else r
        elif tkind == IP:
            ip_get = self._ip_get
            typed = self._typed
            for c, k in zip(pairs, pairs):
                v = c[k]
                r = ip_get(v)
                c[k] = typed(IP, v) if r is None else r
        else:
            typed = self._typed
            for c, k in zip(pairs, pairs):
                c[k] = typed(tkind, c[k])

    def _mark_dict(self, doc: dict[str, Any], node: _Node) -> None:
        shape = ("mark", tuple(doc))
        plan = node.plans.get(shape)
        if plan is None:
            plan = self._plan(node, shape, compile_mark, doc)
            if plan is None:
                self._learn_doc(doc, node, mark=True)
                return
        plan(doc)

    def _mark_list(self, items: list[Any], node: _Node) -> None:
        kind = node.kind
        if kind == KEEP:  # kept strings (categories, types, hashes...): nothing to learn or note
            for v in items:
                t = type(v)
                if t is dict:
                    self._mark_dict(v, node)
                elif t is list:
                    self._mark_list(v, node)
            return
        done = self._seen[kind]
        m = self._marks[node.tkind]
        for i, v in enumerate(items):
            t = type(v)
            if t is str:
                if v not in done:
                    self._learn_new(kind, v)
                m.append(items)
                m.append(i)
            elif t is dict:
                self._mark_dict(v, node)
            elif t is list:
                self._mark_list(v, node)

    # ---------------------------------------------------------------- transform

    def doc(self, doc: dict[str, Any], node: _Node | None = None) -> dict[str, Any]:
        """A pseudonymized copy of an ECS document (`_source`), nested or with dotted keys."""
        self.p.texts.sync()
        return self._copy_dict(doc, node or self.doc_root)

    def _copy_dict(self, doc: dict[str, Any], node: _Node) -> dict[str, Any]:
        shape = ("copy", tuple(doc))
        plan = node.plans.get(shape)
        if plan is None:
            plan = self._plan(node, shape, compile_copy, doc)
            if plan is None:
                return self._doc(doc, node)
        return plan(doc)  # type: ignore[no-any-return]

    # The hot loop: one pass over the document, memoized text results looked up inline.
    def _doc(self, doc: dict[str, Any], node: _Node) -> dict[str, Any]:
        tkinds = node.tkinds
        memo_get = self._memo_get
        compute = self._compute
        out: dict[str, Any] = {}
        for k, v in doc.items():
            try:
                kind = tkinds[k]
            except KeyError:
                kind = node.child(k).tkind
            t = type(v)
            if t is str:
                if kind == TEXT:
                    r = memo_get(v)
                    out[k] = compute(v) if r is None else r
                elif kind == KEEP:
                    out[k] = v
                else:
                    out[k] = self._typed(kind, v)
            elif kind == KEEP:
                out[k] = _copy(v)  # a kept object (hashes, data_stream): everything under it is kept
            elif t is dict:
                if kind == DROP and self.drop_geo:
                    continue
                out[k] = self._copy_dict(v, node.children[k])
            elif t is list:
                if kind == DROP and self.drop_geo:
                    continue
                out[k] = self._list(v, node.children[k])
            else:
                out[k] = v
        return out

    def _list(self, items: list[Any], node: _Node) -> list[Any]:
        kind = node.tkind
        if kind == KEEP:
            return _copy(items)
        memo_get = self.p.texts.memo.get
        out: list[Any] = []
        for v in items:
            t = type(v)
            if t is str:
                r = memo_get(v) if kind == TEXT else None
                out.append(r if r is not None else self._typed(kind, v))
            elif t is dict:
                out.append(self._copy_dict(v, node))
            elif t is list:
                out.append(self._list(v, node))
            else:
                out.append(v)
        return out

    def doc_in_place(
        self, doc: dict[str, Any], node: _Node | None = None, done: set[int] | None = None
    ) -> dict[str, Any]:
        """Pseudonymize a document the caller owns (e.g. just parsed), without copying it.

        `done`, when given, collects the ids of the objects changed: pass one set for a batch of
        live documents that may share objects, so that a shared object is changed once. Parsed
        JSON never shares objects and needs none.
        """
        self.p.texts.sync()
        if done is None:
            self._in_place_dict(doc, node or self.doc_root)
            return doc
        return self._doc_in_place(doc, node or self.doc_root, done)

    def _in_place_dict(self, doc: dict[str, Any], node: _Node) -> None:
        shape = ("in_place", tuple(doc))
        plan = node.plans.get(shape)
        if plan is None:
            plan = self._plan(node, shape, compile_in_place, doc)
            if plan is None:
                self._doc_in_place(doc, node, None)
                return
        plan(doc)

    def _doc_in_place(self, doc: dict[str, Any], node: _Node, done: set[int] | None) -> dict[str, Any]:
        if done is not None:
            if id(doc) in done:
                return doc
            done.add(id(doc))
        tkinds = node.tkinds
        memo_get = self._memo_get
        compute = self._compute
        ip_get = self._ip_get
        dropped: list[str] | None = None
        for k, v in doc.items():  # only values change: the dict's size does not
            try:
                kind = tkinds[k]
            except KeyError:
                kind = node.child(k).tkind
            if kind == KEEP:
                continue
            t = type(v)
            if t is str:
                if kind == TEXT:
                    r = memo_get(v)
                    doc[k] = compute(v) if r is None else r
                elif kind == IP:
                    r = ip_get(v)
                    doc[k] = self._typed(kind, v) if r is None else r
                else:
                    doc[k] = self._typed(kind, v)
            elif t is dict:
                if kind == DROP and self.drop_geo:
                    dropped = (dropped or []) + [k]
                elif done is None:
                    self._in_place_dict(v, node.children[k])
                else:
                    self._doc_in_place(v, node.children[k], done)
            elif t is list:
                if kind == DROP and self.drop_geo:
                    dropped = (dropped or []) + [k]
                else:
                    self._list_in_place(v, node.children[k], done)
        if dropped:
            for k in dropped:
                del doc[k]
        return doc

    def _list_in_place(self, items: list[Any], node: _Node, done: set[int] | None) -> None:
        kind = node.tkind
        if kind == KEEP:
            return
        if done is not None:
            if id(items) in done:
                return
            done.add(id(items))
        get = self._memo_get if kind == TEXT else self._ip_get if kind == IP else None
        for i, v in enumerate(items):
            t = type(v)
            if t is str:
                r = get(v) if get is not None else None
                items[i] = r if r is not None else self._typed(kind, v)
            elif t is dict:
                if done is None:
                    self._in_place_dict(v, node)
                else:
                    self._doc_in_place(v, node, done)
            elif t is list:
                self._list_in_place(v, node, done)

    def _typed(self, kind: int, v: str) -> str:
        p = self.p
        if kind == KEEP:
            return v
        if kind == IP:
            out = p.ips.address(v)
            return out if out is not None else p.texts.compute(v)
        if kind == LABELS:
            return p.names.labels(v) if v else v
        if kind == DROP and self.drop_geo:
            return ""
        r = p.texts.memo.get(v)
        return p.texts.compute(v) if r is None else r

    # ---------------------------------------------------------------- generic JSON

    def learn_json(self, obj: Any, node: _Node | None = None) -> None:
        node = node or self.json_root
        if type(obj) is dict:
            if "_source" in obj or "fields" in obj and "_id" in obj:
                self._learn_hit(obj)
                return
            if type(obj.get("columns")) is list and type(obj.get("values")) is list:
                self._learn_esql(obj)
                return
            for k, v in obj.items():
                child = node.children.get(k) or node.child(k)
                if type(k) is str:
                    self.p.texts.learn(k)
                if type(v) is str:
                    self.learn_value(child.kind, v)
                elif type(v) in (dict, list):
                    self.learn_json(v, child)
        elif type(obj) is list:
            for v in obj:
                if type(v) is str:
                    self.learn_value(node.kind, v)
                else:
                    self.learn_json(v, node)

    def _learn_hit(self, hit: dict[str, Any]) -> None:
        for k, v in hit.items():
            if k in ("_source", "fields", "highlight") and type(v) is dict:
                self.learn_doc(v)
            elif type(v) in (dict, list):
                self.learn_json(v)

    def _learn_esql(self, resp: dict[str, Any]) -> None:
        nodes = [self._column_node(c) for c in resp["columns"]]
        for row in resp["values"]:
            if type(row) is not list:
                continue
            for node, v in zip(nodes, row):
                if type(v) is str:
                    self.learn_value(node.kind, v)
                elif type(v) is list:
                    self._learn_list(v, node)
                elif type(v) is dict:
                    self.learn_doc(v, node)

    def _column_node(self, col: Any) -> _Node:
        name = col.get("name", "") if type(col) is dict else str(col)
        node = self.doc_root.child(name) if name else _Node("", TEXT)
        if type(col) is dict and col.get("type") == "ip" and node.kind not in (IP, KEEP):
            node = _Node(name, IP)
        return node

    def json(self, obj: Any, node: _Node | None = None) -> Any:
        """Any JSON value: search hits and ES|QL responses are recognised, other strings are text,
        keys included (assets keyed by host name)."""
        if node is None:
            self.p.texts.sync()
            node = self.json_root
        t = type(obj)
        if t is dict:
            if "_source" in obj or "fields" in obj and "_id" in obj:
                return self._hit(obj)
            if type(obj.get("columns")) is list and type(obj.get("values")) is list:
                return self._esql(obj)
            out: dict[str, Any] = {}
            text = self.p.texts.compute
            for k, v in obj.items():
                child = node.children.get(k) or node.child(k)
                key = text(k) if type(k) is str else k
                tv = type(v)
                if tv is str:
                    out[key] = v if child.kind == KEEP else self._typed(child.kind, v)
                elif tv is dict or tv is list:
                    out[key] = self.json(v, child)
                else:
                    out[key] = v
            return out
        if t is list:
            return [
                (v if node.kind == KEEP else self._typed(node.kind, v))
                if type(v) is str
                else self.json(v, node)
                for v in obj
            ]
        if t is str:
            return self._typed(node.kind, obj)
        return obj

    def _hit(self, hit: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in hit.items():
            if k in ("_source", "fields", "highlight") and type(v) is dict:
                out[k] = self._copy_dict(v, self.doc_root)
            elif k in ("_index", "_id", "_score", "_routing", "_version", "_seq_no", "_primary_term", "sort"):
                out[k] = v
            else:
                out[k] = self.json(v)
        return out

    def _esql(self, resp: dict[str, Any]) -> dict[str, Any]:
        nodes = [self._column_node(c) for c in resp["columns"]]
        out = dict(resp)
        out["columns"] = resp["columns"]
        rows = []
        for row in resp["values"]:
            if type(row) is not list:
                rows.append(self.json(row))
                continue
            new = []
            for i, v in enumerate(row):
                node = nodes[i] if i < len(nodes) else self.json_root
                tv = type(v)
                if tv is str:
                    new.append(v if node.kind == KEEP else self._typed(node.kind, v))
                elif tv is list:
                    new.append(self._list(v, node))
                elif tv is dict:
                    new.append(self._copy_dict(v, node))
                else:
                    new.append(v)
            rows.append(new)
        out["values"] = rows
        return {
            k: (self.json(v) if k not in ("columns", "values") and type(v) in (dict, list) else v)
            for k, v in out.items()
        }
