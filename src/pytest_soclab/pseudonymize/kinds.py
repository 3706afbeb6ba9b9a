"""The vocabulary of the document walkers: field kinds, how a dotted path is classified, the field tree.

A field's kind comes from its dotted path (nested objects and dotted keys alike):
`source.ip` is an address, `host.name` a host, `user.name` a user, `dns.question.name`
a domain, `process.command_line` free text, `file.hash.sha256` and
`threat.technique.id` are kept. Unknown fields are free text.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from pytest_soclab.models import ecs_fields

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


def copy_json(value: Any) -> Any:
    """A deep copy of a JSON value (dicts and lists; scalars are immutable)."""
    t = type(value)
    if t is dict:
        return {k: copy_json(v) for k, v in value.items()}
    if t is list:
        return [copy_json(v) for v in value]
    return value


# Transforming needs fewer distinctions than learning: every name kind is free text by then.
TRANSFORM_KIND = tuple(k if k in (KEEP, IP, LABELS, DROP) else TEXT for k in range(len(KIND_NAMES)))


class Node:
    """A position in a document's field tree; children are created (and classified) once."""

    __slots__ = ("children", "kind", "kinds", "path", "plans", "sightings", "tkind", "tkinds")

    def __init__(self, path: str, kind: int):
        self.path = path
        self.kind = kind
        self.tkind = TRANSFORM_KIND[kind]
        self.children: dict[str, Node] = {}
        # key -> kind of the child (learning) and what transforming it takes: one lookup in the hot loops
        self.kinds: dict[str, int] = {}
        self.tkinds: dict[str, int] = {}
        # (mode, key tuple) -> compiled walker for objects of that shape here (see shapes.py)
        self.plans: dict[tuple[str, tuple[str, ...]], Callable[[dict[str, Any]], Any]] = {}
        self.sightings: dict[tuple[str, tuple[str, ...]], int] = {}

    def child(self, key: str) -> Node:
        node = self.children.get(key)
        if node is None:
            path = f"{self.path}.{key}" if self.path else key
            node = self.children[key] = Node(path, classify(path))
            self.kinds[key] = node.kind
            self.tkinds[key] = node.tkind
        return node
