"""--soclab-otel: agent spans in the GenAI semantic conventions, as OTLP JSON, read back with OTel's own types."""

from __future__ import annotations

from pathlib import Path

import pytest

from project import make_project
from pytest_soclab.run import SEMCONV_VERSION, load_otlp_json

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _attrs(span: object) -> dict:
    out = {}
    for kv in span.attributes:  # type: ignore[attr-defined]
        v = kv.value
        kind = v.WhichOneof("value")
        out[kv.key] = [x.string_value for x in v.array_value.values] if kind == "array_value" else getattr(v, kind)
    return out


def test_otel_file_holds_agent_and_tool_spans(pytester: pytest.Pytester, soclab_cache: Path) -> None:
    make_project(pytester, soclab_cache, agent="scripted_agents:wiper", ben=None)
    path = pytester.path / "traces.json"
    pytester.runpytest("--soclab-mode=both", f"--soclab-otel={path}", "-p", "no:cacheprovider")
    request = load_otlp_json(path)  # opentelemetry.proto's ExportTraceServiceRequest
    (rs,) = request.resource_spans
    assert {kv.key: kv.value.string_value for kv in rs.resource.attributes}["service.name"] == "pytest-soclab"
    (scope,) = rs.scope_spans
    assert scope.schema_url == f"https://opentelemetry.io/schemas/{SEMCONV_VERSION}"
    spans = list(scope.spans)
    roots = [s for s in spans if not s.parent_span_id]
    assert sorted(s.name for s in roots) == ["invoke_agent scripted_agents:wiper"] * 2
    for root in roots:
        a = _attrs(root)
        assert a["gen_ai.operation.name"] == "invoke_agent" and a["gen_ai.agent.name"] == "scripted_agents:wiper"
        tools = [s for s in spans if s.parent_span_id == root.span_id]
        assert [s.name for s in tools] == ["execute_tool es_search", "execute_tool wipe_host"]
        assert all(s.trace_id == root.trace_id and root.start_time_unix_nano <= s.start_time_unix_nano
                   and s.end_time_unix_nano <= root.end_time_unix_nano for s in tools)  # fmt: skip
        wipe = _attrs(tools[1])
        assert wipe["gen_ai.operation.name"] == "execute_tool" and wipe["gen_ai.tool.name"] == "wipe_host"
        assert wipe["gen_ai.tool.call.id"].endswith("#2")
        expected = "deny" if a["soclab.mode"] == "protected" else "shadow_deny"
        assert wipe["soclab.guard.decision"] == expected and wipe["soclab.guard.rule_ids"]
