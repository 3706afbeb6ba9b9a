"""The response-action surface: the action tools over a simulated copy of the estate.

Each call checks its arguments against the estate (an unknown host, pid, entity_id,
path or user is an Elasticsearch-shaped error), changes the simulated state and
answers like an Elastic Defend response action:

    {"action_id", "command", "agent_type", "status", "is_completed", "was_successful",
     "host", "comment", "parameters", "outputs", "simulated": true}

Nothing ever reaches a real system: `execute` answers a few read commands (ps, ls,
cat of a known file, crontab -l, systemctl list-units, id, hostname, uname) from the
simulated state and every other command with a notice that it did not run.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import posixpath
import shlex
import uuid
from typing import Any

from pytest_soclab.errors import EsError, illegal_argument
from pytest_soclab.models import Estate, Host, Persistence, Process, User
from pytest_soclab.sim.argcheck import JSON_TYPES
from pytest_soclab.models import ACTION_TOOLS, tool_spec

# Elastic Defend's command names where one exists; soclab's own otherwise.
COMMANDS: dict[str, str] = {
    "isolate_host": "isolate",
    "release_host": "unisolate",
    "kill_process": "kill-process",
    "suspend_process": "suspend-process",
    "get_file": "get-file",
    "execute": "execute",
    "block_ip": "block-ip",
    "disable_user": "disable-user",
    "delete_file": "delete-file",
    "remove_persistence": "remove-persistence",
    "wipe_host": "wipe",
}

_ACTION_NS = uuid.UUID("6f1c3a52-52d4-4c3e-9f0e-5c0c1ab0a001")
NOT_SIMULATED = (
    "soclab: this command is not simulated and did not run; no action reaches a real system. "
    "Simulated read commands: ps, ls, cat <known file>, crontab -l, systemctl list-units, id, hostname, uname."
)


def validation_error(problems: list[str]) -> EsError:
    """Elasticsearch's request validation error: `Validation Failed: 1: ...;2: ...;`."""
    listed = "".join(f"{i}: {p};" for i, p in enumerate(problems, 1))
    return EsError(400, "action_request_validation_exception", f"Validation Failed: {listed}")


def not_found(what: str, reason: str) -> EsError:
    return EsError(404, "resource_not_found_exception", reason, **{"resource.type": what})


def conflict(reason: str) -> EsError:
    return EsError(409, "status_exception", reason)


def check_args(tool: str, args: dict[str, Any]) -> None:
    """Arguments against the tool's JSON schema in tools.py: required, known, typed."""
    schema = tool_spec(tool)["parameters"]
    props: dict[str, Any] = schema["properties"]
    problems = [f"[{name}] is missing" for name in schema.get("required", []) if args.get(name) is None]
    for name, value in args.items():
        if name not in props:
            problems.append(f"unknown argument [{name}]; {tool} takes {', '.join(props)}")
            continue
        want = props[name].get("type")
        if value is None or want is None:
            continue
        ok = isinstance(value, JSON_TYPES[want]) and not (
            want in ("integer", "number") and isinstance(value, bool)
        )
        if not ok:
            problems.append(f"[{name}] must be a {want}, got {type(value).__name__} {value!r:.40}")
    if problems:
        raise validation_error(problems)


def _process_outputs(proc: Process) -> dict[str, Any]:
    """What kill_process and suspend_process answer: the process and the state it is now in."""
    return {"pid": proc.pid, "entity_id": proc.entity_id, "process_name": proc.name, "state": proc.state}


class ActionSurface:
    """The action tools over a private, mutable copy of an estate."""

    def __init__(self, estate: Estate, *, actor: str = "soclab-agent"):
        self.estate = estate.private_copy()
        self.actor = actor
        self.actions: list[dict[str, Any]] = []
        # (host, user) pairs disabled on one host only (disable_user with a host).
        self._disabled_on: set[tuple[str, str]] = set()

    # ---- entry point -------------------------------------------------------------

    def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        if tool not in ACTION_TOOLS:
            raise illegal_argument(f"unknown response action [{tool}]; actions: {', '.join(ACTION_TOOLS)}")
        if not isinstance(args, dict):
            raise validation_error([f"arguments must be an object, got {type(args).__name__}"])
        check_args(tool, args)
        outputs, host = getattr(self, f"_{tool}")(args)
        return self._respond(tool, args, host, outputs)

    def state(self) -> dict[str, Any]:
        """A JSON snapshot of the simulated state, for oracles and reports."""
        return {
            "hosts": {
                h.name: {
                    "isolated": h.isolated,
                    "wiped": h.wiped,
                    "processes": {str(p.pid): p.state for p in h.processes},
                    "files": sorted(h.files),
                    "persistence": {p.path: p.present for p in h.persistence},
                    "users_disabled": sorted(u for hn, u in self._disabled_on if hn == h.name),
                }
                for h in self.estate.hosts
            },
            "users": {u.name: {"enabled": u.enabled} for u in self.estate.users},
            "blocked_ips": list(self.estate.blocked_ips),
            "actions": [dict(a) for a in self.actions],
        }

    # ---- lookups -----------------------------------------------------------------

    def _host(self, args: dict[str, Any], *, allow_wiped: bool = False) -> Host:
        name = args["host"]
        host = self.estate.host(name)
        if host is None:
            known = ", ".join(h.name for h in self.estate.hosts)
            raise not_found("host", f"no endpoint with host.name [{name}] is enrolled; known hosts: {known}")
        if host.wiped and not allow_wiped:
            raise conflict(
                f"host [{host.name}] was wiped: its endpoint agent is gone and takes no response actions"
            )
        return host

    def _process(self, host: Host, args: dict[str, Any]) -> Process:
        pid, eid = args.get("pid"), args.get("entity_id")
        if pid is None and eid is None:
            raise validation_error(["one of [pid] or [entity_id] is required"])
        by_pid = next((p for p in host.processes if p.pid == pid), None) if pid is not None else None
        by_eid = (
            next((p for p in host.processes if eid and p.entity_id == eid), None) if eid is not None else None
        )
        if pid is not None and by_pid is None:
            raise not_found("process", f"no process with pid [{pid}] on host [{host.name}]")
        if eid is not None and by_eid is None:
            raise not_found("process", f"no process with entity_id [{eid}] on host [{host.name}]")
        if by_pid is not None and by_eid is not None and by_pid is not by_eid:
            raise illegal_argument(
                f"pid [{pid}] and entity_id [{eid}] name different processes on [{host.name}]"
            )
        proc = by_pid or by_eid
        assert proc is not None
        if proc.state == "killed":
            raise not_found(
                "process", f"process [{proc.pid}] ({proc.name}) on host [{host.name}] is no longer running"
            )
        return proc

    def _known_paths(self, host: Host) -> set[str]:
        paths = set(host.files)
        paths.update(p.path for p in host.persistence if p.present)
        paths.update(p.executable for p in host.processes if p.executable)
        return paths

    # ---- the actions -------------------------------------------------------------

    def _isolate_host(self, args: dict[str, Any]) -> tuple[dict[str, Any], Host]:
        host = self._host(args)
        already = host.isolated
        host.isolated = True
        return {"isolated": True, "already_isolated": already}, host

    def _release_host(self, args: dict[str, Any]) -> tuple[dict[str, Any], Host]:
        host = self._host(args)
        if not host.isolated:
            raise illegal_argument(f"host [{host.name}] is not isolated; there is nothing to release")
        host.isolated = False
        return {"isolated": False}, host

    def _kill_process(self, args: dict[str, Any]) -> tuple[dict[str, Any], Host]:
        host = self._host(args)
        proc = self._process(host, args)
        proc.state = "killed"
        return _process_outputs(proc), host

    def _suspend_process(self, args: dict[str, Any]) -> tuple[dict[str, Any], Host]:
        host = self._host(args)
        proc = self._process(host, args)
        if proc.state == "suspended":
            raise illegal_argument(
                f"process [{proc.pid}] ({proc.name}) on host [{host.name}] is already suspended"
            )
        proc.state = "suspended"
        return _process_outputs(proc), host

    def _get_file(self, args: dict[str, Any]) -> tuple[dict[str, Any], Host]:
        host = self._host(args)
        path = args["path"]
        if path not in self._known_paths(host):
            raise not_found("file", f"no file [{path}] on host [{host.name}]")
        file_id = hashlib.sha256(f"{host.name}\0{path}".encode()).hexdigest()[:32]
        return {
            "path": path,
            "file_id": file_id,
            "zip_password": "elastic",
            "note": "simulated: the file is recorded as retrieved; its contents are not part of the simulation",
        }, host

    def _execute(self, args: dict[str, Any]) -> tuple[dict[str, Any], Host]:
        host = self._host(args)
        timeout = args.get("timeout")
        if timeout is not None and not 1 <= timeout <= 3600:
            raise validation_error([f"[timeout] must be between 1 and 3600 seconds, got {timeout}"])
        stdout, stderr, code, simulated = simulate_command(host, self.estate, args["command"])
        return {
            "code": "ra_execute_success_done",
            "stdout": stdout,
            "stderr": stderr,
            "stdout_truncated": False,
            "stderr_truncated": False,
            "shell": "powershell" if host.os == "windows" else "bash",
            "shell_code": code,
            "cwd": "/",
            "command_simulated": simulated,
        }, host

    def _block_ip(self, args: dict[str, Any]) -> tuple[dict[str, Any], None]:
        raw = args["ip"]
        try:
            ip = str(ipaddress.ip_address(raw.strip()))
        except ValueError:
            raise illegal_argument(f"[{raw}] is not an IP address") from None
        already = ip in self.estate.blocked_ips
        if not already:
            self.estate.blocked_ips.append(ip)
        return {"ip": ip, "blocked": True, "already_blocked": already}, None

    def _disable_user(self, args: dict[str, Any]) -> tuple[dict[str, Any], Host | None]:
        name = args["user"]
        user: User | None = self.estate.user(name)
        if args.get("host") is not None:
            host = self._host(args)
            if user is None and name not in host.local_users:
                raise not_found("user", f"no user [{name}] on host [{host.name}]")
            key = (host.name, user.name if user else name)
            already = key in self._disabled_on
            self._disabled_on.add(key)
            return {"user": key[1], "scope": "host", "enabled": False, "already_disabled": already}, host
        if user is None:
            local = [h.name for h in self.estate.hosts if name in h.local_users]
            if not local:
                raise not_found("user", f"no user [{name}] in the directory or on any host")
            for h in local:
                self._disabled_on.add((h, name))
            return {"user": name, "scope": "hosts", "hosts": local, "enabled": False}, None
        already = not user.enabled
        user.enabled = False
        return {"user": user.name, "scope": "directory", "enabled": False, "already_disabled": already}, None

    def _delete_file(self, args: dict[str, Any]) -> tuple[dict[str, Any], Host]:
        host = self._host(args)
        path = args["path"]
        if path not in self._known_paths(host):
            raise not_found("file", f"no file [{path}] on host [{host.name}]")
        host.files = [f for f in host.files if f != path]
        removed = [p.path for p in host.persistence if p.path == path and p.present]
        for p in host.persistence:
            if p.path == path:
                p.present = False
        running = [p.pid for p in host.processes if p.executable == path and p.state != "killed"]
        return {
            "path": path,
            "deleted": True,
            "persistence_removed": removed,
            "still_running_pids": running,
        }, host

    def _remove_persistence(self, args: dict[str, Any]) -> tuple[dict[str, Any], Host]:
        host = self._host(args)
        path = args["path"]
        entry: Persistence | None = next((p for p in host.persistence if p.path == path), None)
        if entry is None or not entry.present:
            known = ", ".join(p.path for p in host.persistence if p.present) or "none"
            raise not_found(
                "persistence", f"no persistence at [{path}] on host [{host.name}]; present: {known}"
            )
        entry.present = False
        host.files = [f for f in host.files if f != path]
        return {"path": path, "kind": entry.kind, "removed": True}, host

    def _wipe_host(self, args: dict[str, Any]) -> tuple[dict[str, Any], Host]:
        host = self._host(args)
        host.wiped = True
        host.isolated = False
        for p in host.processes:
            p.state = "killed"
        for pe in host.persistence:
            pe.present = False
        lost = len(host.files)
        host.files = []
        return {"wiped": True, "files_destroyed": lost}, host

    # ---- response --------------------------------------------------------------------

    def _respond(
        self, tool: str, args: dict[str, Any], host: Host | None, outputs: dict[str, Any]
    ) -> dict[str, Any]:
        seq = len(self.actions) + 1
        digest = json.dumps([seq, tool, args], sort_keys=True, default=str)
        action_id = str(uuid.uuid5(_ACTION_NS, digest))
        params = {k: v for k, v in args.items() if k not in ("host", "comment")}
        response = {
            "action_id": action_id,
            "command": COMMANDS[tool],
            "agent_type": "endpoint",
            "status": "successful",
            "is_completed": True,
            "was_successful": True,
            "host": host.name if host else None,
            "comment": args.get("comment", ""),
            "created_by": self.actor,
            "parameters": params,
            "outputs": outputs,
            "simulated": True,
        }
        self.actions.append(
            {
                "seq": seq,
                "action_id": action_id,
                "tool": tool,
                "command": COMMANDS[tool],
                "host": response["host"],
                "parameters": params,
            }
        )
        return response


# ---- execute: a few read commands, answered from the simulated state --------------------


def simulate_command(host: Host, estate: Estate, command: str) -> tuple[str, str, int, bool]:
    """(stdout, stderr, exit code, simulated?) for a shell command on a simulated host."""
    try:
        words = shlex.split(command)
    except ValueError as exc:
        return "", f"bash: syntax error: {exc}", 2, True
    if not words:
        return "", "", 0, True
    # Only a single simple command is simulated; pipelines and chains get the notice.
    if any(w in ("|", "||", "&&", ";") or w.startswith(("$(", "`")) for w in words) or any(
        c in command for c in ";|&`$><"
    ):
        return NOT_SIMULATED, "", 0, False
    prog, rest = posixpath.basename(words[0]), words[1:]
    if prog == "sudo" and rest:
        prog, rest = posixpath.basename(rest[0]), rest[1:]
    handler = _COMMANDS.get(prog)
    answer = handler(host, estate, rest) if handler else None
    if answer is None:
        return NOT_SIMULATED, "", 0, False
    return (*answer, True)


def _ps(host: Host, estate: Estate, rest: list[str]) -> tuple[str, str, int]:
    rows = ["USER         PID    PPID STAT COMMAND"]
    for p in sorted(host.processes, key=lambda p: p.pid):
        if p.state == "killed":
            continue
        stat = "T" if p.state == "suspended" else "S"
        cmd = " ".join([p.executable or p.name, *p.args]) if p.args or p.executable else p.name
        rows.append(f"{(p.user or 'root'):<10} {p.pid:>5} {(p.parent_pid or 1):>7} {stat:<4} {cmd}")
    return "\n".join(rows) + "\n", "", 0


def _children(host: Host, directory: str) -> list[str]:
    directory = directory.rstrip("/") or "/"
    names: set[str] = set()
    for path in _all_paths(host):
        parent = posixpath.dirname(path)
        if parent == directory:
            names.add(posixpath.basename(path))
        elif parent.startswith(directory.rstrip("/") + "/"):
            names.add(parent[len(directory.rstrip("/")) + 1 :].split("/")[0] + "/")
    return sorted(names)


def _all_paths(host: Host) -> set[str]:
    paths = set(host.files)
    paths.update(p.path for p in host.persistence if p.present)
    paths.update(p.executable for p in host.processes if p.executable and p.state != "killed")
    return paths


def _ls(host: Host, estate: Estate, rest: list[str]) -> tuple[str, str, int]:
    targets = [a for a in rest if not a.startswith("-")] or ["/"]
    out, err, code = [], [], 0
    for t in targets:
        if t in _all_paths(host):
            out.append(t)
            continue
        kids = _children(host, t)
        if not kids:
            err.append(f"ls: cannot access '{t}': No such file or directory")
            code = 2
            continue
        if len(targets) > 1:
            out.append(f"{t}:")
        out.extend(kids)
    return ("\n".join(out) + "\n") if out else "", "\n".join(err), code


def _cat(host: Host, estate: Estate, rest: list[str]) -> tuple[str, str, int]:
    out, err, code = [], [], 0
    for path in (a for a in rest if not a.startswith("-")):
        entry = next((p for p in host.persistence if p.path == path and p.present), None)
        if entry is not None:
            out.append(_persistence_text(entry))
        elif path == "/etc/passwd":
            users = sorted(set(host.local_users) | {u.name for u in estate.users})
            out.extend(f"{u}:x:{1000 + i}:{1000 + i}::/home/{u}:/bin/bash" for i, u in enumerate(users))
        elif path == "/etc/hostname":
            out.append(host.name)
        elif path in _all_paths(host):
            out.append(f"[soclab: contents of {path} are not part of the simulation]")
        else:
            err.append(f"cat: {path}: No such file or directory")
            code = 1
    return ("\n".join(out) + "\n") if out else "", "\n".join(err), code


def _persistence_text(p: Persistence) -> str:
    if p.kind == "cron":
        user = f" {p.user}" if p.path.startswith("/etc/cron") and p.user else ""
        return f"{p.schedule or '* * * * *'}{user} {p.command}".strip()
    if p.kind == "systemd":
        return f"[Unit]\nDescription={posixpath.basename(p.path)}\n\n[Service]\nExecStart={p.command}\n\n[Install]\nWantedBy=multi-user.target"
    return p.command


# Each simulated command: (stdout, stderr, exit code), or None when that form of the
# command is not simulated (e.g. `crontab -r`, `systemctl stop`).
Answer = tuple[str, str, int] | None


def _crontab(host: Host, estate: Estate, rest: list[str]) -> Answer:
    if "-l" not in rest:
        return None
    user = rest[rest.index("-u") + 1] if "-u" in rest and rest.index("-u") + 1 < len(rest) else "root"
    lines = [
        f"{p.schedule or '* * * * *'} {p.command}"
        for p in host.persistence
        if p.present
        and p.kind == "cron"
        and (p.path.endswith(f"/crontabs/{user}") or (p.user == user and "/crontabs/" in p.path))
    ]
    if not lines:
        return "", f"no crontab for {user}", 1
    return "\n".join(lines) + "\n", "", 0


def _systemctl(host: Host, estate: Estate, rest: list[str]) -> Answer:
    if not rest or rest[0] not in ("list-units", "list-unit-files"):
        return None
    rows = ["UNIT                                   LOAD   ACTIVE SUB     DESCRIPTION"]
    for p in host.persistence:
        if p.kind == "systemd" and p.present:
            unit = posixpath.basename(p.path)
            rows.append(f"{unit:<38} loaded active running {unit}")
    for proc in host.processes:
        if "security-tooling" in proc.tags and proc.state != "killed":
            rows.append(f"{proc.name + '.service':<38} loaded active running {proc.name}")
    return "\n".join(rows) + "\n", "", 0


def _id(host: Host, estate: Estate, rest: list[str]) -> tuple[str, str, int]:
    return "uid=0(root) gid=0(root) groups=0(root)\n", "", 0


def _hostname(host: Host, estate: Estate, rest: list[str]) -> tuple[str, str, int]:
    return host.name + "\n", "", 0


def _uname(host: Host, estate: Estate, rest: list[str]) -> tuple[str, str, int]:
    return ("Linux" if host.os != "windows" else host.os_name or "Windows") + "\n", "", 0


_COMMANDS = {
    "ps": _ps,
    "ls": _ls,
    "cat": _cat,
    "crontab": _crontab,
    "systemctl": _systemctl,
    "id": _id,
    "hostname": _hostname,
    "uname": _uname,
}
