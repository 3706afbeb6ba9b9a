"""Host-side documents: Elastic Defend's process, network and file events, and auth.log (system).

Fresh top-level dicts sharing their static blocks: read-only (see docs.py).
"""

from __future__ import annotations

from typing import Any

from pytest_soclab.corpus.docs import AUTH, CATEGORY_NETWORK, DS, ECS, FILE, NET, PROC
from pytest_soclab.corpus.timeutil import iso_ms
from pytest_soclab.corpus.world import HostCtx, Proc

_PROC_CAT = ["process"]
_T_START = ["start"]
_T_END = ["end"]
_FILE_CAT = ["file"]
_FILE_TYPE = {
    "creation": ["creation"],
    "modification": ["change"],
    "overwrite": ["change"],
    "deletion": ["deletion"],
    "rename": ["change"],
}
_AUTH_CAT = ["authentication", "session"]
_INFO = ["info"]


# -------------------------------------------------------------- Elastic Defend


def _ev(dataset: str, action: str, category: list[str], etype: list[str]) -> dict[str, Any]:
    return {
        "action": action,
        "category": category,
        "dataset": dataset,
        "kind": "event",
        "module": "endpoint",
        "type": etype,
    }


# Elastic Defend's event blocks do not vary per document: built once, shared (read-only).
_EV_PROC = {
    a: _ev("endpoint.events.process", a, _PROC_CAT, _T_END if a == "end" else _T_START)
    for a in ("exec", "fork", "end")
}
_EV_NET = {
    True: _ev("endpoint.events.network", "connection_attempted", CATEGORY_NETWORK, _T_START),
    False: _ev("endpoint.events.network", "connection_accepted", CATEGORY_NETWORK, _T_START),
}
_EV_FILE = {a: _ev("endpoint.events.file", a, _FILE_CAT, t) for a, t in _FILE_TYPE.items()}


def process_event(ctx: HostCtx, ts: int, proc: Proc, uid: str, action: str = "exec") -> dict[str, Any]:
    """An Elastic Defend process event (exec / fork / end)."""
    stamp = iso_ms(ts)
    p: dict[str, Any] = {
        "args": proc.args,
        "args_count": len(proc.args),
        "command_line": proc.command_line,
        "entity_id": proc.entity_id,
        "executable": proc.executable,
        "name": proc.name,
        "pid": proc.pid,
        "start": stamp if proc.start_ms == ts else iso_ms(proc.start_ms),
        "working_directory": proc.working_directory,
    }
    if proc.hashes:
        p["hash"] = proc.hashes
    if proc.parent is not None:
        p["parent"] = proc.parent.parent_block()
    if action == "end":
        p["end"] = stamp
        p["exit_code"] = 0
    return _process_doc(ctx, stamp, action, p, {"id": uid, "name": proc.user})


def process_end_event(ctx: HostCtx, ts: int, exec_doc: dict[str, Any]) -> dict[str, Any]:
    """The end event of a process, from its exec event (same process block plus end and exit code)."""
    stamp = iso_ms(ts)
    p = dict(exec_doc["process"])
    p["end"] = stamp
    p["exit_code"] = 0
    return _process_doc(ctx, stamp, "end", p, exec_doc["user"])


def _process_doc(
    ctx: HostCtx, stamp: str, action: str, process: dict[str, Any], user: dict[str, Any]
) -> dict[str, Any]:
    # One envelope for every process event, however its process block was made: an end event built
    # from its exec event must keep the shape (and key order) of one built from the process.
    return {
        "@timestamp": stamp,
        "agent": ctx.endpoint_agent,
        "data_stream": DS[PROC],
        "ecs": ECS,
        "event": _EV_PROC[action],
        "host": ctx.host_block,
        "message": "Endpoint process event",
        "process": process,
        "user": user,
    }


def _proc_ref(proc: Proc) -> dict[str, Any]:
    return {"entity_id": proc.entity_id, "executable": proc.executable, "name": proc.name, "pid": proc.pid}


def network_event(
    ctx: HostCtx,
    ts: int,
    proc: Proc,
    uid: str,
    src: str,
    sport: int,
    dst: str,
    dport: int,
    transport: str,
    egress: bool,
    community: str | None = None,
) -> dict[str, Any]:
    """An Elastic Defend network event, from the point of view of the host that owns `proc`."""
    net: dict[str, Any] = {
        "direction": "egress" if egress else "ingress",
        "transport": transport,
        "type": "ipv6" if ":" in src else "ipv4",
    }
    if community:
        net["community_id"] = community
    return {
        "@timestamp": iso_ms(ts),
        "agent": ctx.endpoint_agent,
        "data_stream": DS[NET],
        "destination": {"address": dst, "ip": dst, "port": dport},
        "ecs": ECS,
        "event": _EV_NET[egress],
        "host": ctx.host_block,
        "message": "Endpoint network event",
        "network": net,
        "process": _proc_ref(proc),
        "source": {"address": src, "ip": src, "port": sport},
        "user": {"id": uid, "name": proc.user},
    }


def file_event(
    ctx: HostCtx,
    ts: int,
    proc: Proc,
    uid: str,
    path: str,
    action: str,
    size: int | None = None,
    hashes: dict[str, str] | None = None,
) -> dict[str, Any]:
    directory, _, name = path.rpartition("/")
    f: dict[str, Any] = {"directory": directory or "/", "name": name, "path": path}
    if "." in name.lstrip("."):
        f["extension"] = name.rsplit(".", 1)[1]
    if size is not None:
        f["size"] = size
    if hashes:
        f["hash"] = hashes
    return {
        "@timestamp": iso_ms(ts),
        "agent": ctx.endpoint_agent,
        "data_stream": DS[FILE],
        "ecs": ECS,
        "event": _EV_FILE[action],
        "file": f,
        "host": ctx.host_block,
        "message": "Endpoint file event",
        "process": _proc_ref(proc),
        "user": {"id": uid, "name": proc.user},
    }


# -------------------------------------------------------------- system integration (auth.log)


def ssh_auth_event(
    ctx: HostCtx,
    ts: int,
    sshd_pid: int,
    user: str,
    src: str,
    sport: int,
    method: str,
    outcome: str,
    invalid_user: bool = False,
) -> dict[str, Any]:
    if outcome == "success":
        verb, ev = "Accepted", "Accepted"
    else:
        verb, ev = "Failed", "Failed"
    who = f"invalid user {user}" if invalid_user else user
    msg = f"{verb} {method} for {who} from {src} port {sport} ssh2"
    return {
        "@timestamp": iso_ms(ts),
        "agent": ctx.filebeat_agent,
        "data_stream": DS[AUTH],
        "ecs": ECS,
        "event": {
            "action": "ssh_login",
            "category": _AUTH_CAT,
            "dataset": "system.auth",
            "kind": "event",
            "module": "system",
            "outcome": outcome,
            "timezone": "+00:00",
            "type": _INFO,
        },
        "host": ctx.host_block,
        "log": {"file": {"path": "/var/log/auth.log"}},
        "message": msg,
        "process": {"name": "sshd", "pid": sshd_pid},
        "related": {"ip": [src], "user": [user]},
        "source": {"ip": src, "port": sport},
        "system": {"auth": {"ssh": {"event": ev, "method": method}}},
        "user": {"name": user},
    }


def sudo_event(
    ctx: HostCtx, ts: int, sudo_pid: int, user: str, command: str, tty: str = "pts/0"
) -> dict[str, Any]:
    pwd = "/root" if user == "root" else f"/home/{user}"
    return {
        "@timestamp": iso_ms(ts),
        "agent": ctx.filebeat_agent,
        "data_stream": DS[AUTH],
        "ecs": ECS,
        "event": {
            "category": _PROC_CAT,
            "dataset": "system.auth",
            "kind": "event",
            "module": "system",
            "outcome": "success",
            "timezone": "+00:00",
            "type": _INFO,
        },
        "host": ctx.host_block,
        "log": {"file": {"path": "/var/log/auth.log"}},
        "message": f"{user} : TTY={tty} ; PWD={pwd} ; USER=root ; COMMAND={command}",
        "process": {"name": "sudo", "pid": sudo_pid},
        "related": {"user": [user, "root"]},
        "system": {"auth": {"sudo": {"command": command, "pwd": pwd, "tty": tty, "user": "root"}}},
        "user": {"effective": {"name": "root"}, "name": user},
    }
