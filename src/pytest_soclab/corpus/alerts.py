"""Kibana detection-engine alerts (`.alerts-security.alerts-default`) built from the event they fire on."""

from __future__ import annotations

from typing import Any

from pytest_soclab.corpus import ids
from pytest_soclab.corpus.recipe import AlertSpec
from pytest_soclab.corpus.timeutil import iso_ms, parse_duration_ms
from pytest_soclab.models import attack_techniques

KIBANA_VERSION = "8.15.3"
# Fields of the source event that the alert does not copy (it has its own event/kibana blocks).
_NOT_COPIED = ("data_stream", "event", "@timestamp", "message")


def backing_index(stream: str, ts: int) -> str:
    """The data stream's backing index a document written at `ts` lands in (daily rollover)."""
    return f".ds-{stream}-{iso_ms(ts)[:10].replace('-', '.')}-000001"


def _threat(technique: str | None) -> list[dict[str, Any]]:
    if not technique:
        return []
    info = attack_techniques().get(technique, {})
    parent = technique.split(".")[0]
    tech: dict[str, Any] = {
        "id": parent,
        "name": attack_techniques().get(parent, {}).get("name", ""),
        "reference": f"https://attack.mitre.org/techniques/{parent}/",
    }
    if "." in technique:
        sub = technique.split(".")[1]
        tech["subtechnique"] = [
            {
                "id": technique,
                "name": info.get("name", ""),
                "reference": f"https://attack.mitre.org/techniques/{parent}/{sub}/",
            }
        ]
    tactic = (info.get("tactics") or [""])[0]
    return [
        {
            "framework": "MITRE ATT&CK",
            "tactic": {"name": tactic.replace("-", " ").title()},
            "technique": [tech],
        }
    ]


def _reason(spec: AlertSpec, src: dict[str, Any]) -> str:
    ev = src.get("event", {})
    cat = (ev.get("category") or ["event"])[0]
    parts = [f"{cat} event"]
    proc = src.get("process", {})
    if proc.get("name"):
        parts.append(f"with process {proc['name']},")
    if src.get("file", {}).get("path"):
        parts.append(f"file {src['file']['path']},")
    if src.get("source", {}).get("ip"):
        parts.append(f"source {src['source']['ip']}:{src['source'].get('port', '')},")
    if src.get("destination", {}).get("ip"):
        parts.append(f"destination {src['destination']['ip']}:{src['destination'].get('port', '')},")
    if src.get("user", {}).get("name"):
        parts.append(f"by {src['user']['name']}")
    host = src.get("host", {}).get("name")
    where = f" on {host}" if host else ""
    return " ".join(parts).rstrip(",") + f"{where} created {spec.severity} alert {spec.rule}."


def detection_alert(
    case_id: str, spec: AlertSpec, source: tuple[int, str, dict[str, Any]], source_id: str
) -> tuple[int, dict[str, Any]]:
    """The alert document for `source` (ts, stream, doc) with id `source_id`; returns (alert ts, doc)."""
    src_ts, stream, src = source
    ts = src_ts + parse_duration_ms(spec.offset)
    rule_id = spec.rule_id or ids.uuid_from("rule", spec.rule)
    alert_uuid = ids.hex_from(case_id, "alert", rule_id, source_id, n=64)
    orig_event = {
        k: v
        for k, v in src.get("event", {}).items()
        if k in ("action", "category", "dataset", "kind", "module", "outcome", "type")
    }
    doc: dict[str, Any] = {"@timestamp": iso_ms(ts)}
    for k, v in src.items():
        if k not in _NOT_COPIED:
            doc[k] = v
    rule: dict[str, Any] = {
        "category": {
            "query": "Custom Query Rule",
            "eql": "Event Correlation Rule",
            "threshold": "Threshold Rule",
            "new_terms": "New Terms Rule",
            "machine_learning": "Machine Learning Rule",
            "esql": "ES|QL Rule",
        }[spec.rule_type],
        "consumer": "siem",
        "description": spec.description or spec.rule,
        "enabled": True,
        "from": "now-6m",
        "interval": "5m",
        "name": spec.rule,
        "risk_score": spec.risk_score,
        "rule_id": rule_id,
        "severity": spec.severity,
        "type": spec.rule_type,
        "uuid": ids.uuid_from("rule-uuid", rule_id),
        "version": "3",
    }
    threat = _threat(spec.technique)
    if threat:
        rule["threat"] = threat
    doc["event"] = {**{k: v for k, v in orig_event.items() if k != "kind"}, "kind": "signal"}
    doc["kibana"] = {
        "alert": {
            "ancestors": [
                {"depth": 0, "id": source_id, "index": backing_index(stream, src_ts), "type": "event"}
            ],
            "depth": 1,
            "original_event": orig_event,
            "original_time": iso_ms(src_ts),
            "reason": _reason(spec, src),
            "risk_score": spec.risk_score,
            "rule": rule,
            "severity": spec.severity,
            "status": "active",
            "uuid": alert_uuid,
            "workflow_status": "open",
        },
        "space_ids": ["default"],
        "version": KIBANA_VERSION,
    }
    return ts, doc
