"""An estate derived from the telemetry itself, for a live cluster whose data has no recipe.

Action tools and the guard need hosts, users, IPs and processes to check arguments
against; here they come from what the data shows, through the backend's own
ES|QL. What the data cannot say (criticality tiers, roles) takes neutral
defaults: tier 2 for every host, so no host gets the tier-0 protections by guess.
"""

from __future__ import annotations

from typing import Any

from pytest_soclab.errors import EsError
from pytest_soclab.models import Estate, Host, Process, User

HOST_LIMIT = 2000
PROCESS_LIMIT = 20000


def _rows(backend: Any, query: str) -> list[dict[str, Any]]:
    try:
        res = backend.esql_query(query)
    except EsError:
        return []  # a missing data stream or field: that part of the estate stays empty
    cols = [c["name"] for c in res.get("columns", [])]
    return [dict(zip(cols, row)) for row in res.get("values", [])]


def _list(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def derive_estate(backend: Any) -> Estate:
    hosts: dict[str, Host] = {}
    rows = _rows(backend, f"FROM logs-* | STATS ips = VALUES(host.ip), os = VALUES(host.os.type) BY host.name | LIMIT {HOST_LIMIT}")
    # Recorded Windows events carry neither host.ip nor host.os.type: their hosts still count.
    rows = rows or _rows(backend, f"FROM logs-* | STATS n = COUNT(*) BY host.name | LIMIT {HOST_LIMIT}")
    for r in rows:
        name = r.get("host.name")
        if not name:
            continue
        os_type = next(iter(_list(r.get("os"))), "linux")
        hosts[name] = Host(name=name, os=str(os_type), ips=sorted(map(str, _list(r.get("ips")))), tier=2)
    procs = _rows(
        backend,
        "FROM logs-endpoint.events.process-* | WHERE event.type == \"start\" | "
        "STATS last = MAX(@timestamp) BY host.name, process.pid, process.name, process.executable, process.entity_id, user.name | "
        f"SORT last DESC | LIMIT {PROCESS_LIMIT}",
    )
    # Windows: Sysmon's process creations (event 1) carry the same fields.
    procs += _rows(
        backend,
        "FROM logs-windows.sysmon_operational-* | WHERE event.code == \"1\" | "
        "STATS last = MAX(@timestamp) BY host.name, process.pid, process.name, process.executable, process.entity_id, user.name | "
        f"SORT last DESC | LIMIT {PROCESS_LIMIT}",
    )
    for r in procs:
        host = hosts.get(r.get("host.name") or "")
        if host is None or r.get("process.pid") is None:
            continue
        host.processes.append(
            Process(
                pid=int(r["process.pid"]),
                name=str(r.get("process.name") or ""),
                executable=str(r.get("process.executable") or ""),
                entity_id=str(r.get("process.entity_id") or ""),
                user=str(r.get("user.name") or ""),
            )
        )
    for r in _rows(backend, "FROM logs-endpoint.events.file-* | STATS n = COUNT(*) BY host.name, file.path | LIMIT 50000"):
        host = hosts.get(r.get("host.name") or "")
        if host is not None and r.get("file.path"):
            host.files.append(str(r["file.path"]))
    users = sorted({str(r["user.name"]) for r in _rows(backend, "FROM logs-* | STATS n = COUNT(*) BY user.name | LIMIT 5000") if r.get("user.name")})
    return Estate(
        hosts=[hosts[n] for n in sorted(hosts)],
        users=[User(name=u) for u in users],
    )


def time_range(backend: Any) -> dict[str, Any]:
    rows = _rows(backend, "FROM logs-* | STATS gte = MIN(@timestamp), lte = MAX(@timestamp)")
    return {"gte": rows[0].get("gte"), "lte": rows[0].get("lte")} if rows else {}


def data_streams(backend: Any) -> list[str]:
    """The data streams behind the cluster's indices (`_cat/indices` lists their backing indices)."""
    from pytest_soclab.sim.entities import data_stream_of

    try:
        rows = backend.list_indices("logs-*,.alerts-security.alerts-*")
    except EsError:
        return []
    return sorted({data_stream_of(str(r["index"])) for r in rows if r.get("index")})
