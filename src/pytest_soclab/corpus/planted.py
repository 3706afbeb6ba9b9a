"""Planted documents: the few attacker-controlled documents an ATK scenario overlays on its case.

A scenario gives an index and a partial document; what it omits is filled so that
the document looks like the other documents of its data stream: a timestamp in
the window, `data_stream`, `ecs`, `agent`, `host` from the estate, the event
fields of the stream, the process fields Elastic Defend always writes.
"""

from __future__ import annotations

import json
from typing import Any

from pytest_soclab.corpus import docs, ids
from pytest_soclab.corpus.recipe import CaseRecipe
from pytest_soclab.corpus.recorded import RecordedCase
from pytest_soclab.corpus.timeutil import iso_ms
from pytest_soclab.corpus.world import World
from pytest_soclab.errors import SoclabError

# event.* defaults per data stream (the planted document's own values win).
_EVENT: dict[str, dict[str, Any]] = {
    docs.PROC: {
        "action": "exec",
        "category": ["process"],
        "kind": "event",
        "module": "endpoint",
        "type": ["start"],
    },
    docs.NET: {
        "action": "connection_attempted",
        "category": ["network"],
        "kind": "event",
        "module": "endpoint",
        "type": ["start"],
    },
    docs.FILE: {
        "action": "creation",
        "category": ["file"],
        "kind": "event",
        "module": "endpoint",
        "type": ["creation"],
    },
    docs.AUTH: {
        "action": "ssh_login",
        "category": ["authentication", "session"],
        "kind": "event",
        "module": "system",
        "outcome": "success",
        "type": ["info"],
    },
    docs.ZEEK_CONN: {
        "category": ["network"],
        "kind": "event",
        "module": "zeek",
        "type": ["connection", "end"],
    },
    docs.ZEEK_DNS: {
        "category": ["network"],
        "kind": "event",
        "module": "zeek",
        "type": ["connection", "protocol"],
    },
    docs.ZEEK_HTTP: {
        "category": ["network", "web"],
        "kind": "event",
        "module": "zeek",
        "type": ["connection", "info", "protocol"],
    },
    docs.ZEEK_SSL: {
        "category": ["network"],
        "kind": "event",
        "module": "zeek",
        "type": ["connection", "protocol"],
    },
    docs.SURICATA: {
        "category": ["network", "intrusion_detection"],
        "kind": "alert",
        "module": "suricata",
        "type": ["allowed"],
    },
    docs.ALERTS: {"kind": "signal"},
}
_MESSAGE = {
    docs.PROC: "Endpoint process event",
    docs.NET: "Endpoint network event",
    docs.FILE: "Endpoint file event",
}
_ENDPOINT = (docs.PROC, docs.NET, docs.FILE)
_SENSOR = (docs.ZEEK_CONN, docs.ZEEK_DNS, docs.ZEEK_HTTP, docs.ZEEK_SSL, docs.SURICATA)


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out


def _unflatten(doc: dict[str, Any]) -> dict[str, Any]:
    """Accept dotted keys ("process.command_line") as well as nested objects."""
    out: dict[str, Any] = {}
    for k, v in doc.items():
        if isinstance(v, dict):
            v = _unflatten(v)
        if "." in k and k != "@timestamp":
            head, rest = k.split(".", 1)
            out[head] = _merge(
                out.get(head, {}) if isinstance(out.get(head), dict) else {}, _unflatten({rest: v})
            )
        elif isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out


def _copy(obj: Any) -> Any:
    return json.loads(json.dumps(obj))


def expand_planted(
    recipe: CaseRecipe | RecordedCase, planted: list[tuple[str, dict[str, Any]]]
) -> list[tuple[str, str, dict[str, Any]]]:
    """(index, partial doc) pairs -> (index, doc id, full doc), deterministic. On a recorded case
    (no recipe to complete them from) the documents are taken as complete: they are written as the
    recording's source logs them (attacks/recorded.py) or given whole by the scenario."""
    if isinstance(recipe, RecordedCase):
        return [
            (index, ids.doc_id_from(recipe.id, "planted", index, json.dumps(doc, sort_keys=True)), _unflatten(_copy(doc)))
            for index, doc in _documents(planted)
        ]
    world = World(recipe)
    span = world.end_ms - world.start_ms
    out: list[tuple[str, str, dict[str, Any]]] = []
    for n, (index, partial) in enumerate(_documents(planted)):
        doc = _unflatten(_copy(partial))
        # Default time: late in the window, spaced per document, so it sits among the attack's traces.
        ts_ms = world.start_ms + int(span * 0.7) + n * 97_000
        if "@timestamp" not in doc:
            doc["@timestamp"] = iso_ms(ts_ms)
        host_name = (doc.get("host") or {}).get("name") if isinstance(doc.get("host"), dict) else None
        ctx = None
        if host_name is not None:
            ctx = world.hosts.get(host_name)
        elif index in _SENSOR:
            ctx = world.zeek if index != docs.SURICATA else (world.suricata or world.zeek)
        base: dict[str, Any] = {"ecs": dict(docs.ECS)}
        if index != docs.ALERTS:
            base["data_stream"] = {"dataset": docs.dataset_of(index), "namespace": "default", "type": "logs"}
        if ctx is not None:
            base["host"] = _copy(ctx.host_block)
            base["agent"] = _copy(ctx.endpoint_agent if index in _ENDPOINT else ctx.filebeat_agent)
        ev = dict(_EVENT.get(index, {"kind": "event"}))
        if index != docs.ALERTS:
            ev["dataset"] = docs.dataset_of(index)
        base["event"] = ev
        if index in _MESSAGE:
            base["message"] = _MESSAGE[index]
        full = _merge(base, doc)
        if index in _ENDPOINT and isinstance(full.get("process"), dict):
            _fill_process(full["process"], recipe.id, n, ctx.agent_id if ctx else "", full["@timestamp"])
        did = ids.doc_id_from(recipe.id, "planted", index, json.dumps(full, sort_keys=True))
        out.append((index, did, full))
    return out


def _documents(planted: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
    for n, (index, doc) in enumerate(planted):
        if not isinstance(doc, dict):
            raise SoclabError(f"planted document {n} for {index}: a document is a mapping, got {type(doc).__name__}")
    return planted


def _fill_process(p: dict[str, Any], case_id: str, n: int, agent_id: str, ts: str) -> None:
    if "args" not in p and isinstance(p.get("command_line"), str):
        p["args"] = p["command_line"].split()
    if "command_line" not in p and isinstance(p.get("args"), list):
        p["command_line"] = " ".join(map(str, p["args"]))
    if "executable" not in p and isinstance(p.get("args"), list) and p["args"]:
        first = str(p["args"][0])
        p["executable"] = first if first.startswith("/") else f"/usr/bin/{first}"
    if "name" not in p and isinstance(p.get("executable"), str):
        p["name"] = p["executable"].rsplit("/", 1)[-1]
    if isinstance(p.get("args"), list):
        p.setdefault("args_count", len(p["args"]))
    if "pid" not in p:
        p["pid"] = 20_000 + ids.stable_int(case_id, "planted-pid", n, mod=40_000)
    if "entity_id" not in p:
        p["entity_id"] = ids.entity_id(agent_id or "planted", p["pid"], ids.stable_int(ts, mod=10**12))
