"""The guard input model and the parts built from the estate."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from guard_fixtures import BASE, sample_estate
from pytest_soclab.guard.inputs import GuardInput, assets_from_estate, tooling_from_estate


def test_tooling_from_estate_uses_tags() -> None:
    t = tooling_from_estate(sample_estate())
    assert t.processes == ["elastic-endpoint", "zeek"]
    assert t.paths == ["/etc/cron.d/zeekctl", "/opt/Elastic/Endpoint/elastic-endpoint", "/opt/zeek/bin/zeek"]
    assert t.users == ["zeek"]
    assert {(p.host, p.pid, p.name) for p in t.pids} == {("web-01", 812, "elastic-endpoint"), ("sensor-01", 4242, "zeek")}
    # the malicious process and cron are not tooling
    assert "/tmp/.sysupdate" not in t.paths and "/etc/cron.d/sysupdate" not in t.paths


def test_assets_from_estate() -> None:
    a = assets_from_estate(sample_estate())
    assert a["dc-01"].tier == 0 and a["dc-01"].role == "domain-controller" and a["dc-01"].ips == ["10.0.0.5"]
    assert a["sensor-01"].tags == ["security-tooling"]


def test_model_round_trip_and_validation() -> None:
    gi = GuardInput.model_validate(BASE)
    assert gi.to_input() == BASE
    assert "max_tool_calls" not in gi.to_input()["scenario"]  # None fields are left out
    with pytest.raises(ValidationError):
        GuardInput.model_validate({**BASE, "mode": "enforcing"})
    with pytest.raises(ValidationError):
        GuardInput.model_validate({**BASE, "scenario": {**BASE["scenario"], "kind": "drill"}})
