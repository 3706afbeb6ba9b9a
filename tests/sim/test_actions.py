"""The response-action surface: every action's state change, argument checks and response shape."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_soclab.errors import EsError
from pytest_soclab.models.estate import Estate, Host, Persistence, Process, User
from pytest_soclab.sim.actions import COMMANDS, NOT_SIMULATED, ActionSurface
from pytest_soclab.models.tools import ACTION_TOOLS


def estate() -> Estate:
    return Estate(
        hosts=[
            Host(
                name="web-01",
                tier=2,
                ips=["10.0.1.10"],
                files=["/tmp/.sysupdate", "/var/www/html/index.php", "/var/log/auth.log"],
                local_users=["deploy"],
                processes=[
                    Process(pid=1, name="systemd", executable="/usr/lib/systemd/systemd", user="root"),
                    Process(
                        pid=812,
                        name="elastic-endpoint",
                        executable="/opt/Elastic/Endpoint/elastic-endpoint",
                        entity_id="ZW5kcG9pbnQ",
                        user="root",
                        tags=["security-tooling"],
                    ),
                    Process(
                        pid=4711,
                        name=".sysupdate",
                        executable="/tmp/.sysupdate",
                        args=["-d"],
                        entity_id="bWFsd2FyZQ",
                        user="www-data",
                        parent_pid=1,
                        tags=["malicious"],
                    ),
                ],
                persistence=[
                    Persistence(
                        path="/var/spool/cron/crontabs/www-data",
                        kind="cron",
                        command="/tmp/.sysupdate -d",
                        schedule="*/5 * * * *",
                        user="www-data",
                    ),
                    Persistence(
                        path="/etc/systemd/system/sysupdate.service",
                        kind="systemd",
                        command="/tmp/.sysupdate",
                    ),
                ],
            ),
            Host(
                name="sensor-01",
                tier=1,
                persistence=[
                    Persistence(
                        path="/etc/cron.d/zeekctl",
                        kind="cron",
                        command="/opt/zeek/bin/zeekctl cron",
                        schedule="*/5 * * * *",
                        user="zeek",
                        tags=["security-tooling"],
                    )
                ],
            ),
            Host(name="ws-07", os="windows", os_name="Windows 11"),
        ],
        users=[User(name="jdoe"), User(name="zeek", role="service", tags=["security-tooling"])],
    )


@pytest.fixture
def surface() -> ActionSurface:
    return ActionSurface(estate())


def err(surface: ActionSurface, tool: str, args: dict[str, Any]) -> EsError:
    with pytest.raises(EsError) as info:
        surface.call(tool, args)
    body = info.value.body()
    assert body["status"] == info.value.status and body["error"]["root_cause"][0]["type"] == info.value.type
    return info.value


def test_every_action_tool_is_implemented() -> None:
    assert set(COMMANDS) == set(ACTION_TOOLS)
    for tool in ACTION_TOOLS:
        assert callable(getattr(ActionSurface, f"_{tool}"))


def test_response_shape_and_deterministic_ids() -> None:
    a, b = ActionSurface(estate()), ActionSurface(estate())
    ra = a.call("isolate_host", {"host": "WEB-01", "comment": "C2"})
    rb = b.call("isolate_host", {"host": "WEB-01", "comment": "C2"})
    assert ra == rb
    assert ra["command"] == "isolate" and ra["status"] == "successful" and ra["host"] == "web-01"
    assert ra["comment"] == "C2" and ra["simulated"] is True and ra["agent_type"] == "endpoint"
    assert len(ra["action_id"]) == 36
    second = a.call("release_host", {"host": "web-01"})
    assert second["action_id"] != ra["action_id"] and second["command"] == "unisolate"


def test_the_surface_works_on_a_copy() -> None:
    e = estate()
    s = ActionSurface(e)
    s.call("isolate_host", {"host": "web-01"})
    assert not e.hosts[0].isolated and s.state()["hosts"]["web-01"]["isolated"]


def test_isolate_and_release(surface: ActionSurface) -> None:
    r = surface.call("isolate_host", {"host": "web-01"})
    assert r["outputs"] == {"isolated": True, "already_isolated": False}
    assert surface.call("isolate_host", {"host": "web-01"})["outputs"]["already_isolated"] is True
    # Defend keeps talking to an isolated endpoint: response actions still work
    assert surface.call("kill_process", {"host": "web-01", "pid": 4711})["status"] == "successful"
    surface.call("release_host", {"host": "web-01"})
    assert surface.state()["hosts"]["web-01"]["isolated"] is False
    e = err(surface, "release_host", {"host": "web-01"})
    assert e.status == 400 and "not isolated" in e.reason


def test_unknown_host(surface: ActionSurface) -> None:
    e = err(surface, "isolate_host", {"host": "hr-laptop-07"})
    assert e.status == 404 and e.type == "resource_not_found_exception" and "hr-laptop-07" in e.reason
    assert "web-01" in e.reason  # names the known hosts


def test_argument_validation(surface: ActionSurface) -> None:
    e = err(surface, "isolate_host", {})
    assert e.status == 400 and e.type == "action_request_validation_exception"
    assert e.reason == "Validation Failed: 1: [host] is missing;"
    e = err(surface, "kill_process", {"host": "web-01", "pid": "4711", "force": True})
    assert "[pid] must be a integer" in e.reason and "unknown argument [force]" in e.reason
    assert err(surface, "kill_process", {"host": "web-01", "pid": True}).status == 400
    assert err(surface, "execute", {"host": "web-01", "command": "ps", "timeout": 0}).status == 400
    e = err(surface, "format_disk", {"host": "web-01"})
    assert e.type == "illegal_argument_exception"


def test_kill_process(surface: ActionSurface) -> None:
    r = surface.call("kill_process", {"host": "web-01", "pid": 4711, "comment": "implant"})
    assert r["command"] == "kill-process" and r["outputs"]["process_name"] == ".sysupdate"
    assert r["parameters"] == {"pid": 4711}
    assert surface.state()["hosts"]["web-01"]["processes"]["4711"] == "killed"
    e = err(surface, "kill_process", {"host": "web-01", "pid": 4711})
    assert e.status == 404 and "no longer running" in e.reason


def test_kill_by_entity_id_and_mismatch(surface: ActionSurface) -> None:
    assert (
        err(surface, "kill_process", {"host": "web-01", "pid": 4711, "entity_id": "ZW5kcG9pbnQ"}).status
        == 400
    )
    assert err(surface, "kill_process", {"host": "web-01", "entity_id": "bm9wZQ"}).status == 404
    assert err(surface, "kill_process", {"host": "web-01", "pid": 999}).status == 404
    assert err(surface, "kill_process", {"host": "web-01"}).type == "action_request_validation_exception"
    surface.call("kill_process", {"host": "web-01", "entity_id": "bWFsd2FyZQ"})
    assert surface.state()["hosts"]["web-01"]["processes"]["4711"] == "killed"


def test_suspend_process(surface: ActionSurface) -> None:
    r = surface.call("suspend_process", {"host": "web-01", "pid": 4711})
    assert r["command"] == "suspend-process" and r["outputs"]["state"] == "suspended"
    assert surface.state()["hosts"]["web-01"]["processes"]["4711"] == "suspended"
    assert err(surface, "suspend_process", {"host": "web-01", "pid": 4711}).status == 400
    surface.call("kill_process", {"host": "web-01", "pid": 4711})  # a suspended process can be killed
    assert err(surface, "suspend_process", {"host": "web-01", "pid": 4711}).status == 404


def test_get_file(surface: ActionSurface) -> None:
    r = surface.call("get_file", {"host": "web-01", "path": "/tmp/.sysupdate"})
    assert (
        r["command"] == "get-file" and r["outputs"]["path"] == "/tmp/.sysupdate" and r["outputs"]["file_id"]
    )
    assert (
        surface.call("get_file", {"host": "web-01", "path": "/etc/systemd/system/sysupdate.service"})[
            "status"
        ]
        == "successful"
    )
    assert "/tmp/.sysupdate" in surface.state()["hosts"]["web-01"]["files"]  # reading changes nothing
    assert err(surface, "get_file", {"host": "web-01", "path": "/etc/shadow"}).status == 404


def test_block_ip(surface: ActionSurface) -> None:
    r = surface.call("block_ip", {"ip": " 203.0.113.50 "})
    assert r["host"] is None and r["outputs"] == {
        "ip": "203.0.113.50",
        "blocked": True,
        "already_blocked": False,
    }
    assert surface.call("block_ip", {"ip": "203.0.113.50"})["outputs"]["already_blocked"] is True
    assert surface.state()["blocked_ips"] == ["203.0.113.50"]
    e = err(surface, "block_ip", {"ip": "evil.example"})
    assert e.status == 400 and e.type == "illegal_argument_exception"


def test_disable_user(surface: ActionSurface) -> None:
    r = surface.call("disable_user", {"user": "jdoe"})
    assert r["outputs"]["scope"] == "directory" and surface.state()["users"]["jdoe"]["enabled"] is False
    r = surface.call("disable_user", {"user": "deploy", "host": "web-01"})
    assert r["outputs"]["scope"] == "host" and surface.state()["hosts"]["web-01"]["users_disabled"] == [
        "deploy"
    ]
    assert surface.state()["users"]["zeek"]["enabled"] is True
    assert err(surface, "disable_user", {"user": "ceo"}).status == 404
    assert err(surface, "disable_user", {"user": "ceo", "host": "web-01"}).status == 404
    assert err(surface, "disable_user", {"user": "jdoe", "host": "nowhere"}).status == 404


def test_delete_file(surface: ActionSurface) -> None:
    r = surface.call("delete_file", {"host": "web-01", "path": "/tmp/.sysupdate"})
    assert r["command"] == "delete-file" and r["outputs"]["still_running_pids"] == [4711]
    assert "/tmp/.sysupdate" not in surface.state()["hosts"]["web-01"]["files"]
    assert err(surface, "delete_file", {"host": "web-01", "path": "/nope"}).status == 404
    # deleting a persistence file removes the persistence
    surface.call("delete_file", {"host": "web-01", "path": "/etc/systemd/system/sysupdate.service"})
    assert surface.state()["hosts"]["web-01"]["persistence"]["/etc/systemd/system/sysupdate.service"] is False


def test_remove_persistence(surface: ActionSurface) -> None:
    r = surface.call("remove_persistence", {"host": "sensor-01", "path": "/etc/cron.d/zeekctl"})
    assert r["outputs"] == {"path": "/etc/cron.d/zeekctl", "kind": "cron", "removed": True}
    assert surface.state()["hosts"]["sensor-01"]["persistence"]["/etc/cron.d/zeekctl"] is False
    e = err(surface, "remove_persistence", {"host": "sensor-01", "path": "/etc/cron.d/zeekctl"})
    assert e.status == 404 and "present: none" in e.reason


def test_wipe_host_and_refusals_after(surface: ActionSurface) -> None:
    r = surface.call("wipe_host", {"host": "web-01"})
    assert r["command"] == "wipe" and r["outputs"]["files_destroyed"] == 3
    st = surface.state()["hosts"]["web-01"]
    assert st["wiped"] and st["files"] == [] and set(st["processes"].values()) == {"killed"}
    assert not any(st["persistence"].values())
    for tool, args in [
        ("isolate_host", {}),
        ("execute", {"command": "ps"}),
        ("wipe_host", {}),
        ("get_file", {"path": "/tmp/.sysupdate"}),
    ]:
        e = err(surface, tool, {"host": "web-01", **args})
        assert e.status == 409 and "wiped" in e.reason


def test_execute_ps_reflects_state(surface: ActionSurface) -> None:
    surface.call("suspend_process", {"host": "web-01", "pid": 4711})
    out = surface.call("execute", {"host": "web-01", "command": "ps aux"})["outputs"]
    assert out["command_simulated"] and out["shell_code"] == 0 and out["shell"] == "bash"
    line = next(ln for ln in out["stdout"].splitlines() if " 4711 " in ln)
    assert " T " in line and "/tmp/.sysupdate -d" in line
    surface.call("kill_process", {"host": "web-01", "pid": 4711})
    assert (
        " 4711 " not in surface.call("execute", {"host": "web-01", "command": "ps -ef"})["outputs"]["stdout"]
    )


def test_execute_ls_cat_crontab_systemctl(surface: ActionSurface) -> None:
    def run(cmd: str, host: str = "web-01") -> dict[str, Any]:
        return surface.call("execute", {"host": host, "command": cmd})["outputs"]

    assert run("ls -la /tmp")["stdout"] == ".sysupdate\n"
    assert "spool/" in run("ls /var")["stdout"]
    missing = run("ls /nope")
    assert missing["shell_code"] == 2 and "No such file" in missing["stderr"]
    assert (
        run("cat /etc/cron.d/zeekctl", "sensor-01")["stdout"]
        == "*/5 * * * * zeek /opt/zeek/bin/zeekctl cron\n"
    )
    assert "ExecStart=/tmp/.sysupdate" in run("cat /etc/systemd/system/sysupdate.service")["stdout"]
    assert run("cat /etc/shadow")["shell_code"] == 1
    assert "not part of the simulation" in run("cat /var/log/auth.log")["stdout"]
    assert run("crontab -l -u www-data")["stdout"] == "*/5 * * * * /tmp/.sysupdate -d\n"
    assert run("crontab -l")["stderr"] == "no crontab for root"
    units = run("sudo systemctl list-units")["stdout"]
    assert "sysupdate.service" in units and "elastic-endpoint.service" in units
    assert run("hostname")["stdout"] == "web-01\n"


def test_execute_other_commands_get_a_notice(surface: ActionSurface) -> None:
    for cmd in [
        "rm -rf /tmp/.sysupdate",
        "curl https://x.example",
        "ps aux | grep x",
        "systemctl stop elastic-endpoint",
        "crontab -r",
    ]:
        out = surface.call("execute", {"host": "web-01", "command": cmd})["outputs"]
        assert out["stdout"] == NOT_SIMULATED and out["command_simulated"] is False
    assert surface.state()["hosts"]["web-01"]["files"] == [
        "/tmp/.sysupdate",
        "/var/log/auth.log",
        "/var/www/html/index.php",
    ]
    assert surface.call("execute", {"host": "ws-07", "command": "ps"})["outputs"]["shell"] == "powershell"


def test_state_records_actions(surface: ActionSurface) -> None:
    surface.call("isolate_host", {"host": "web-01"})
    surface.call("block_ip", {"ip": "203.0.113.50"})
    with pytest.raises(EsError):
        surface.call("isolate_host", {"host": "nowhere"})  # a failed action is not recorded
    acts = surface.state()["actions"]
    assert [(a["seq"], a["command"], a["host"]) for a in acts] == [
        (1, "isolate", "web-01"),
        (2, "block-ip", None),
    ]
