"""PowerShell events -> ECS, as Elastic's `windows.powershell_operational` and `windows.powershell` pipelines map them.

Operational 4103-4106 carry their context in `ContextInfo` ("Key = Value" lines); the classic
"Windows PowerShell" events 400/403/600/800 only in the message ("Key=Value" lines), which is
where NXLog leaves it.
"""

from __future__ import annotations

import re
from typing import Any

from pytest_soclab.importers.cmdline import split_windows
from pytest_soclab.importers.ecs import Doc, basename, integer, put, set_file

OPERATIONAL: dict[int, tuple[list[str], list[str], str]] = {
    4103: (["process"], ["info"], "Executing Pipeline"),
    4104: (["process"], ["info"], "Execute a Remote Command"),
    4105: (["process"], ["start"], "Starting Command"),
    4106: (["process"], ["end"], "Stopping Command"),
}
CLASSIC: dict[int, tuple[list[str], list[str], str]] = {
    400: (["process"], ["start"], "Engine Lifecycle"),
    403: (["process"], ["end"], "Engine Lifecycle"),
    600: (["process"], ["info"], "Provider Lifecycle"),
    800: (["process"], ["info"], "Pipeline Execution Details"),
}
# context key (spaces removed) -> ECS / powershell.* field
_CONTEXT = {
    "HostApplication": "process.command_line",
    "HostName": "powershell.process.executable_version_name",
    "HostVersion": "powershell.process.executable_version",
    "HostID": "powershell.id",
    "HostId": "powershell.id",
    "EngineVersion": "powershell.engine.version",
    "RunspaceID": "powershell.runspace_id",
    "RunspaceId": "powershell.runspace_id",
    "PipelineID": "powershell.pipeline_id",
    "PipelineId": "powershell.pipeline_id",
    "CommandName": "powershell.command.name",
    "CommandType": "powershell.command.type",
    "CommandPath": "powershell.command.path",
    "CommandLine": "powershell.command.value",
    "ScriptName": "file.path",
    "SequenceNumber": "event.sequence",
    "ConnectedUser": "powershell.connected_user",
    "ShellID": "powershell.process.shell_id",
    "User": "user",
    "UserId": "user",
}


def known_operational(event_id: int) -> bool:
    return event_id in OPERATIONAL


def context(text: str) -> dict[str, str]:
    """`Key = Value` / `Key=Value` lines -> {Key without spaces: Value}; later duplicates are ignored."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, eq, value = line.partition("=")
        key = key.strip().replace(" ", "")
        if eq and key.isalnum() and key not in out:
            out[key] = value.strip()
    return out


def map_event(doc: Doc, event_id: int, data: dict[str, Any], message: str | None, classic: bool) -> None:
    table = CLASSIC if classic else OPERATIONAL
    cats = table.get(event_id)
    if cats:
        put(doc, "event.category", list(cats[0]))
        put(doc, "event.type", list(cats[1]))
        put(doc, "event.action", cats[2])
    put(doc, "powershell.file.script_block_text", data.get("ScriptBlockText"))
    put(doc, "powershell.file.script_block_id", data.get("ScriptBlockId"))
    put(doc, "powershell.sequence", integer(data.get("MessageNumber")))
    put(doc, "powershell.total", integer(data.get("MessageTotal")))
    if data.get("Path"):
        set_file(doc, data.get("Path"))
    ctx_text = data.get("ContextInfo")
    if not isinstance(ctx_text, str) and classic and isinstance(message, str):
        ctx_text = message
    if isinstance(ctx_text, str):
        _apply_context(doc, context(ctx_text))
    # What the pipeline did: 4103's Payload, the "Details:" part of a classic 800's message.
    details = data.get("Payload") if not classic else _details_section(message)
    put(doc, "powershell.command.invocation_details", invocation_details(details) or None)


_DETAIL = re.compile(r'^\s*(\w+)\(([^)]*)\):\s*(.*?)\s*$')
_NAME_VALUE = re.compile(r'^name="(.*?)";\s*value="(.*)"$', re.DOTALL)


def _details_section(message: str | None) -> str | None:
    if not isinstance(message, str):
        return None
    _, sep, rest = message.partition("Details:")
    return rest if sep else None


def invocation_details(text: Any) -> list[dict[str, str]]:
    """`CommandInvocation(Out-String): "Out-String"` / `ParameterBinding(Out-String): name="InputObject";
    value="..."` lines -> Elastic's `powershell.command.invocation_details` objects."""
    out: list[dict[str, str]] = []
    for line in str(text or "").splitlines():
        m = _DETAIL.match(line)
        if not m:
            continue
        kind, related, rest = m.groups()
        item = {"type": kind, "related_command": related}
        nv = _NAME_VALUE.match(rest)
        if nv:
            item.update(name=nv.group(1), value=nv.group(2))
        elif rest:
            item["value"] = rest[1:-1] if len(rest) >= 2 and rest[0] == rest[-1] == '"' else rest
        out.append(item)
    return out


def _apply_context(doc: Doc, ctx: dict[str, str]) -> None:
    for key, value in ctx.items():
        target = _CONTEXT.get(key)
        if not target or not value:
            continue
        if target == "user":
            domain, sep, name = value.partition("\\")
            put(doc, "user.domain", domain if sep else None)
            put(doc, "user.name", name if sep else value)
        elif target == "event.sequence":
            put(doc, target, integer(value))
        elif target == "file.path":
            if "file" not in doc:
                set_file(doc, value)
        else:
            put(doc, target, value)
    cmd = doc.get("process", {}).get("command_line")
    if cmd:
        args = split_windows(cmd)
        put(doc, "process.args", args)
        put(doc, "process.args_count", len(args) if args else None)
        if args:
            put(doc, "process.executable", args[0])
            put(doc, "process.name", basename(args[0]))
