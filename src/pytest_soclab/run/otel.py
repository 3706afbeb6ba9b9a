"""Agent traces in OpenTelemetry's GenAI semantic conventions, written as OTLP JSON (--soclab-otel=PATH).

One `invoke_agent {agent}` span per item, with one `execute_tool {tool}` child per tool call
(`gen_ai.tool.name`, `gen_ai.tool.call.id`, the guard's decision as `soclab.guard.*`), built with
the OpenTelemetry SDK and encoded by its OTLP encoder; the file is one ExportTraceServiceRequest in
the OTLP/JSON encoding (ids as hex). The tracer's schema URL pins semantic conventions 1.37.0.

The transcript records each call's duration, not its wall-clock start: tool spans are laid out in
call order from the item's start with their measured durations (their gaps are not known).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from pytest_soclab.models import ItemResult

TRACER_VERSION = "1"  # of the span layout below
SEMCONV_VERSION = "1.37.0"
SCHEMA_URL = f"https://opentelemetry.io/schemas/{SEMCONV_VERSION}"
_ID_FIELDS = ("traceId", "spanId", "parentSpanId")


def _provider_name(agent: str) -> str | None:
    kind = agent.partition(":")[0]
    return kind if kind in ("openai", "anthropic") else None


def guard_decision(call: dict[str, Any]) -> str:
    g = call.get("guard")
    if g is None:
        return "none"
    if g["allow"]:
        return "allow"
    return "deny" if g["enforced"] else "shadow_deny"


class OtelTraces:
    """Collects the spans of finished items; `write()` encodes them all to one OTLP JSON file."""

    def __init__(self, path: Path):
        # Imported here: the OpenTelemetry SDK is an optional extra (`pytest-soclab[otel]`).
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        self.path = path
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider(resource=Resource.create({"service.name": "pytest-soclab"}))  # fmt: skip
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.tracer = self.provider.get_tracer("pytest_soclab", TRACER_VERSION, schema_url=SCHEMA_URL)

    def record(self, result: ItemResult, end_s: float) -> None:
        from opentelemetry import trace
        from opentelemetry.trace import SpanKind, Status, StatusCode

        end_ns = int(end_s * 1e9)
        start_ns = end_ns - int(result.duration_s * 1e9)
        attrs: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": result.agent,
            "soclab.item.nodeid": result.nodeid,
            "soclab.scenario.id": result.scenario_id,
            "soclab.scenario.kind": result.kind,
            "soclab.mode": result.mode,
            "soclab.outcome": result.outcome,
            "soclab.score": result.score,
            "soclab.tool_calls": result.tool_calls,
        }
        provider = _provider_name(result.agent)
        if provider:
            attrs["gen_ai.provider.name"] = provider
            attrs["gen_ai.request.model"] = result.agent.partition(":")[2]
        for key, name in (("input_tokens", "gen_ai.usage.input_tokens"), ("output_tokens", "gen_ai.usage.output_tokens")):
            if isinstance(result.usage.get(key), int):
                attrs[name] = result.usage[key]
        root = self.tracer.start_span(f"invoke_agent {result.agent}", kind=SpanKind.INTERNAL, attributes=attrs,
                                      start_time=start_ns)  # fmt: skip
        if result.outcome == "error":
            root.set_status(Status(StatusCode.ERROR, (result.error or "")[:200]))
        ctx = trace.set_span_in_context(root)
        t = start_ns
        for call in result.transcript:
            dur = int(float(call.get("duration_ms", 0.0)) * 1e6)
            g = call.get("guard") or {}
            tool_attrs: dict[str, Any] = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": call["tool"],
                "gen_ai.tool.type": "function",
                "gen_ai.tool.call.id": f"{result.nodeid}#{call['seq']}",
                "soclab.guard.decision": guard_decision(call),
                "soclab.guard.enforced": bool(g.get("enforced", False)),
                "soclab.guard.rule_ids": list(g.get("rule_ids", [])),
                "soclab.legit": bool(call.get("legit", False)),
                "soclab.false_block": bool(call.get("false_block", False)),
            }
            span = self.tracer.start_span(f"execute_tool {call['tool']}", context=ctx, kind=SpanKind.INTERNAL,
                                          attributes=tool_attrs, start_time=t)  # fmt: skip
            if not call.get("ok", True):
                span.set_attribute("error.type", "tool_error")
                span.set_status(Status(StatusCode.ERROR, "the tool call failed or was denied"))
            span.end(end_time=min(t + dur, end_ns))
            t = min(t + dur, end_ns)
        root.end(end_time=end_ns)

    def otlp_json(self) -> dict[str, Any]:
        from google.protobuf.json_format import MessageToDict
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

        doc = MessageToDict(encode_spans(self.exporter.get_finished_spans()))
        # OTLP/JSON writes trace and span ids as hex, where protobuf's JSON mapping writes base64.
        for rs in doc.get("resourceSpans", []):
            for ss in rs.get("scopeSpans", []):
                for span in ss.get("spans", []):
                    for f in _ID_FIELDS:
                        if f in span:
                            span[f] = base64.b64decode(span[f]).hex()
        return doc

    def write(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(self.otlp_json(), indent=1) + "\n", encoding="utf-8")
        self.provider.shutdown()


def load_otlp_json(path: Path) -> Any:
    """Read a file `OtelTraces` wrote into the OTLP protobuf type (ExportTraceServiceRequest)."""
    from google.protobuf.json_format import ParseDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    doc = json.loads(path.read_text(encoding="utf-8"))
    for rs in doc.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            for span in ss.get("spans", []):
                for f in _ID_FIELDS:
                    if f in span:
                        span[f] = base64.b64encode(bytes.fromhex(span[f])).decode()
    return ParseDict(doc, ExportTraceServiceRequest())
