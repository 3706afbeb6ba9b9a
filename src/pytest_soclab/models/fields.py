"""The non-ECS fields the generator writes, with their mapping types, as the integrations define them.

ECS fields come from the shipped definitions (`pytest_soclab.models.reference.ecs_fields`); these are the
integration namespaces (zeek.*, suricata.eve.*, system.auth.*) and Kibana's alert fields (kibana.*).
Same shape as the ECS definitions: flat name -> {"type": ..., "array": True?}. A store builds its
mappings from `field_definitions()`.
"""

from __future__ import annotations

from typing import Any

from pytest_soclab.models.reference import ecs_fields

_K, _L, _B, _D, _F = "keyword", "long", "boolean", "date", "float"


def _f(t: str, array: bool = False) -> dict[str, Any]:
    return {"type": t, "array": True} if array else {"type": t}


NON_ECS_FIELDS: dict[str, dict[str, Any]] = {
    # zeek integration
    "zeek.session_id": _f(_K),
    "zeek.connection.state": _f(_K),
    "zeek.connection.history": _f(_K),
    "zeek.connection.local_orig": _f(_B),
    "zeek.connection.local_resp": _f(_B),
    "zeek.connection.missed_bytes": _f(_L),
    "zeek.dns.AA": _f(_B),
    "zeek.dns.RA": _f(_B),
    "zeek.dns.RD": _f(_B),
    "zeek.dns.TC": _f(_B),
    "zeek.dns.answers": _f(_K, True),
    "zeek.dns.qclass": _f(_L),
    "zeek.dns.qclass_name": _f(_K),
    "zeek.dns.qtype_name": _f(_K),
    "zeek.dns.query": _f(_K),
    "zeek.dns.rcode_name": _f(_K),
    "zeek.dns.rejected": _f(_B),
    "zeek.dns.trans_id": _f(_K),
    "zeek.http.resp_mime_types": _f(_K, True),
    "zeek.http.status_msg": _f(_K),
    "zeek.http.tags": _f(_K, True),
    "zeek.http.trans_depth": _f(_L),
    "zeek.ssl.established": _f(_B),
    "zeek.ssl.resumed": _f(_B),
    "zeek.ssl.server.name": _f(_K),
    "zeek.ssl.version": _f(_K),
    # suricata integration
    "suricata.eve.alert.action": _f(_K),
    "suricata.eve.alert.category": _f(_K),
    "suricata.eve.alert.gid": _f(_L),
    "suricata.eve.alert.rev": _f(_L),
    "suricata.eve.alert.severity": _f(_L),
    "suricata.eve.alert.signature": _f(_K),
    "suricata.eve.alert.signature_id": _f(_L),
    "suricata.eve.app_proto": _f(_K),
    "suricata.eve.event_type": _f(_K),
    "suricata.eve.flow_id": _f(_K),
    "suricata.eve.in_iface": _f(_K),
    # system integration (auth.log)
    "system.auth.ssh.event": _f(_K),
    "system.auth.ssh.method": _f(_K),
    "system.auth.sudo.command": _f(_K),
    "system.auth.sudo.pwd": _f(_K),
    "system.auth.sudo.tty": _f(_K),
    "system.auth.sudo.user": _f(_K),
    # Kibana security alerts
    "kibana.space_ids": _f(_K, True),
    "kibana.version": _f(_K),
    "kibana.alert.ancestors.depth": _f(_L),
    "kibana.alert.ancestors.id": _f(_K),
    "kibana.alert.ancestors.index": _f(_K),
    "kibana.alert.ancestors.type": _f(_K),
    "kibana.alert.depth": _f(_L),
    "kibana.alert.original_event.action": _f(_K),
    "kibana.alert.original_event.category": _f(_K, True),
    "kibana.alert.original_event.dataset": _f(_K),
    "kibana.alert.original_event.kind": _f(_K),
    "kibana.alert.original_event.module": _f(_K),
    "kibana.alert.original_event.outcome": _f(_K),
    "kibana.alert.original_event.type": _f(_K, True),
    "kibana.alert.original_time": _f(_D),
    "kibana.alert.reason": _f(_K),
    "kibana.alert.risk_score": _f(_F),
    "kibana.alert.severity": _f(_K),
    "kibana.alert.status": _f(_K),
    "kibana.alert.uuid": _f(_K),
    "kibana.alert.workflow_status": _f(_K),
    "kibana.alert.rule.category": _f(_K),
    "kibana.alert.rule.consumer": _f(_K),
    "kibana.alert.rule.description": _f(_K),
    "kibana.alert.rule.enabled": _f(_B),
    "kibana.alert.rule.from": _f(_K),
    "kibana.alert.rule.interval": _f(_K),
    "kibana.alert.rule.name": _f(_K),
    "kibana.alert.rule.risk_score": _f(_F),
    "kibana.alert.rule.rule_id": _f(_K),
    "kibana.alert.rule.severity": _f(_K),
    "kibana.alert.rule.type": _f(_K),
    "kibana.alert.rule.uuid": _f(_K),
    "kibana.alert.rule.version": _f(_K),
    "kibana.alert.rule.threat.framework": _f(_K),
    "kibana.alert.rule.threat.tactic.name": _f(_K),
    "kibana.alert.rule.threat.technique.id": _f(_K),
    "kibana.alert.rule.threat.technique.name": _f(_K),
    "kibana.alert.rule.threat.technique.reference": _f(_K),
    "kibana.alert.rule.threat.technique.subtechnique.id": _f(_K),
    "kibana.alert.rule.threat.technique.subtechnique.name": _f(_K),
    "kibana.alert.rule.threat.technique.subtechnique.reference": _f(_K),
}


def field_definitions() -> dict[str, dict[str, Any]]:
    """ECS definitions plus the integration and alert fields the corpus uses."""
    return {**ecs_fields(), **NON_ECS_FIELDS}


def field_value(doc: dict[str, Any], dotted: str) -> Any:
    """The value at a dotted field path (`host.name`) of a document, nested or with dotted keys
    (`{"host.name": ...}`, as planted documents are written), or None."""
    cur: Any = doc
    parts = dotted.split(".")
    for i, part in enumerate(parts):
        if not isinstance(cur, dict):
            return None
        if i < len(parts) - 1:
            rest = ".".join(parts[i:])
            if rest in cur:
                return cur[rest]
        cur = cur.get(part)
    return cur
