"""The reference analyst `playbook`: a careful, deterministic SOC analyst.

It investigates only through the tools, like any agent, and never reads the answer key:

1. anchor on the trigger: the alert behind it (and how often its rule fires), or the sweeps a hunt
   lead calls for (threat-intel joins, outbound volume outliers, DNS tunnels);
2. walk the process tree of the suspicious activity back to where its session started (a web server
   worker, an ssh login, a desktop session, systemd) and take the whole session;
3. follow the attacker across hosts: ssh logins back to their source host, ssh/scp commands forward
   to the next login; the process that opened each connection;
4. link processes to their network connections, and the outside addresses to zeek (conn, http, ssl,
   dns), suricata and threat intel; check who else talked to them;
5. tell the estate's own noisy work apart (scheduled scans, configuration management, package updates,
   backup jobs) and decide: malicious, reconnaissance, or authorised;
6. contain proportionately when the scenario grants response tools and the evidence is strong, and
   report the chain with references to the documents that show it.

The implementation lives in `pytest_soclab.agents.analyst` (one module per job).
"""

from __future__ import annotations

from typing import Any

from pytest_soclab.agents.analyst import windows
from pytest_soclab.agents.analyst.core import Analyst
from pytest_soclab.agents.analyst.windows.analyst import WindowsAnalyst
from pytest_soclab.agents.analyst.windows.sensor import SensorAnalyst, sensor_only
from pytest_soclab.agents.analyst.untrusted import looks_like_instruction
from pytest_soclab.agents.analyst.untrusted import strings as _strings

__all__ = ["Analyst", "_strings", "investigate", "looks_like_instruction"]


def investigate(trigger: dict[str, Any], tools: Any) -> dict[str, Any]:
    """The `playbook` agent: the data streams decide which analyst works the case (Windows event logs
    and Sysmon; the network sensor alone; Linux endpoint and network telemetry)."""
    analyst = Analyst(trigger, tools)
    analyst.tel.discover_streams()
    if windows.applies(analyst.tel.streams):
        return WindowsAnalyst(trigger, tools, analyst.tel).run()
    if sensor_only(analyst.tel.streams):
        return SensorAnalyst(trigger, tools, analyst.tel).run()
    return analyst.run()
