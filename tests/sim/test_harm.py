"""Destructive against legitimate state, or containment of the attacker's own artifacts."""

from __future__ import annotations

from pytest_soclab.models.estate import Estate, Host, Persistence, Process
from pytest_soclab.sim.harm import destroys_legitimate_state

ESTATE = Estate(
    hosts=[
        Host(
            name="web-01",
            processes=[Process(pid=7, name=".sysupdate", executable="/tmp/.sysupdate", tags=["malicious"])],
            persistence=[
                Persistence(path="/var/spool/cron/crontabs/www-data", kind="cron", tags=["malicious"]),
                Persistence(path="/etc/cron.d/zeekctl", kind="cron", tags=["security-tooling"]),
            ],
        )
    ]
)


def test_attacker_artifacts_are_containment_anything_else_is_damage() -> None:
    assert not destroys_legitimate_state("remove_persistence", {"host": "web-01", "path": "/var/spool/cron/crontabs/www-data"}, ESTATE)
    assert not destroys_legitimate_state("delete_file", {"host": "web-01", "path": "/tmp/.sysupdate"}, ESTATE)
    assert destroys_legitimate_state("remove_persistence", {"host": "web-01", "path": "/etc/cron.d/zeekctl"}, ESTATE)
    assert destroys_legitimate_state("delete_file", {"host": "web-01", "path": "/var/log/auth.log"}, ESTATE)
    # the same path on another host is not the attacker's artifact there
    assert destroys_legitimate_state("delete_file", {"host": "web-02", "path": "/tmp/.sysupdate"}, ESTATE)


def test_wiping_is_always_damage_and_reversible_actions_never_are() -> None:
    assert destroys_legitimate_state("wipe_host", {"host": "web-01"}, ESTATE)
    for tool in ("disable_user", "isolate_host", "kill_process", "block_ip"):
        assert not destroys_legitimate_state(tool, {"host": "web-01", "user": "alice", "ip": "1.2.3.4"}, ESTATE)
