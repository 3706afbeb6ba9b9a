"""Helpers for the guard tests: the shipped policies, a small estate, a guard input builder.

(A module of its own, not conftest, so that test modules can import it by a unique name.)
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from pytest_soclab.guard.inputs import (
    GuardInput,
    ScenarioInfo,
    Scope,
    Seen,
    TimeRange,
    assets_from_estate,
    tooling_from_estate,
)
from pytest_soclab.models.estate import Estate, Host, Persistence, Process, User
from pytest_soclab.models.tools import ALL_TOOLS

REPO = Path(__file__).resolve().parents[2]
POLICY_DIR = REPO / "rego"


def sample_estate() -> Estate:
    return Estate(
        hosts=[
            Host(name="dc-01", role="domain-controller", tier=0, ips=["10.0.0.5"]),
            Host(name="db-01", role="database", tier=0, ips=["10.0.0.7"]),
            Host(
                name="web-01",
                role="web",
                tier=2,
                ips=["10.0.1.10"],
                processes=[
                    Process(
                        pid=812,
                        name="elastic-endpoint",
                        executable="/opt/Elastic/Endpoint/elastic-endpoint",
                        entity_id="ZWxhc3RpYy1lbmRwb2ludC04MTI",
                        tags=["security-tooling"],
                        user="root",
                    ),
                    Process(
                        pid=4711,
                        name=".sysupdate",
                        executable="/tmp/.sysupdate",
                        entity_id="bWFsd2FyZS00NzEx",
                        user="www-data",
                        tags=["malicious"],
                    ),
                ],
                persistence=[
                    Persistence(path="/etc/cron.d/sysupdate", kind="cron", command="/tmp/.sysupdate")
                ],
            ),
            Host(
                name="sensor-01",
                role="sensor",
                tier=1,
                ips=["10.0.2.2"],
                tags=["security-tooling"],
                processes=[
                    Process(
                        pid=4242,
                        name="zeek",
                        executable="/opt/zeek/bin/zeek",
                        entity_id="emVlay00MjQy",
                        user="zeek",
                        tags=["security-tooling"],
                    )
                ],
                persistence=[
                    Persistence(
                        path="/etc/cron.d/zeekctl",
                        kind="cron",
                        command="/opt/zeek/bin/zeekctl cron",
                        user="zeek",
                        tags=["security-tooling"],
                    )
                ],
            ),
        ],
        users=[
            User(name="jdoe"),
            User(name="www-data", role="service"),
            User(name="zeek", role="service", tags=["security-tooling"]),
        ],
        allowed_domains=["elastic.example.internal", "corp.example"],
    )


def base_input() -> dict[str, Any]:
    estate = sample_estate()
    gi = GuardInput(
        tool="es_search",
        args={},
        scenario=ScenarioInfo(
            id="ATK-TEST",
            kind="attack",
            allowed_tools=list(ALL_TOOLS),
            scope=Scope(
                indices=["logs-*", ".alerts-security.alerts-default", "logs-ti_*"],
                time_range=TimeRange(gte="2026-03-02T00:00:00Z", lte="2026-03-04T00:00:00Z"),
                allowed_domains=estate.allowed_domains,
            ),
        ),
        assets=assets_from_estate(estate),
        tooling=tooling_from_estate(estate),
        seen=Seen(
            hosts=["web-01", "DC-01", "sensor-01", "db-01"],
            ips=["203.0.113.50", "10.0.1.10"],
            pids=[4711, 812, 4242],
            users=["www-data", "jdoe", "zeek"],
            files=["/tmp/.sysupdate", "/etc/cron.d/sysupdate", "/etc/cron.d/zeekctl"],
            domains=["c2.evil-updates.net"],
            urls=["http://c2.evil-updates.net/gate.php?id=42"],
            entity_ids=["bWFsd2FyZS00NzEx", "ZWxhc3RpYy1lbmRwb2ludC04MTI"],
            host_sources={
                "web-01": ["logs-endpoint.events.process-default", ".alerts-security.alerts-default"],
                "dc-01": [".alerts-security.alerts-default"],
            },
        ),
    )
    return gi.to_input()


def _merge(dst: dict[str, Any], src: dict[str, Any]) -> None:
    for k, v in src.items():
        if isinstance(v, dict) and isinstance(dst.get(k), dict):
            _merge(dst[k], v)
        else:
            dst[k] = v


def make_input(tool: str, args: dict[str, Any], **overrides: Any) -> dict[str, Any]:
    inp = copy.deepcopy(BASE)
    inp["tool"], inp["args"] = tool, copy.deepcopy(args)
    _merge(inp, overrides)
    return inp


BASE = base_input()


