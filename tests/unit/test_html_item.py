"""The HTML report's item extra: a plain summary, the detail packed, every tool result whole."""

from __future__ import annotations

import json
import re

from hypothesis import given, strategies as st

from factories import item
from pytest_soclab.models import GuardDecision, ToolCall
from pytest_soclab.report import item_extra, item_html, merge_texts, pack_texts, page_assets, store_html
from pytest_soclab.report.html_item import item_detail_html, pretty_json, split_findings
from pytest_soclab.report.packed import pack_text, unpack_text
from pytest_soclab.run.item import EXCERPT_LIMIT, _excerpt

BIG = {"hits": {"total": {"value": 40}, "hits": [{"_id": f"doc-{i}", "_source": {"host": {"name": f"web-{i:02}"}}}
                                                 for i in range(40)]}}


def _calls() -> list[ToolCall]:
    deny = GuardDecision(allow=False, enforced=False, rule_ids=["no_wipe"], reasons=["wipe_host is destructive"])
    return [
        ToolCall(seq=1, tool="es_search", args={"index": "logs-*"}, result=BIG),
        ToolCall(seq=2, tool="wipe_host", args={"host": "web-01"}, decision=deny, result={"wiped": "web-01"}),
        ToolCall(seq=3, tool="esql_query", args={"query": "FROM x"}, ok=False,
                 error={"error": {"type": "verification_exception", "reason": "<b>unknown</b> index [x]"}}),
    ]


def _result(**kw: object):  # type: ignore[no-untyped-def]
    calls = _calls()
    report = "# Verdict\n\nweb-01 <script>alert(1)</script>\n\n" + json.dumps({"implicated_hosts": ["web-01"]})
    r = item("ATK-001", mode="baseline", tool_calls=3, shadow_denials=1, report=report, **kw)
    r.transcript = [_excerpt(c) for c in calls]
    return r, calls


def _detail(extra: str) -> str:
    (packed,) = re.findall(r'data-gz="([A-Za-z0-9+/=]+)"', extra)
    return unpack_text(packed)


def _store(*texts: dict[str, list[str]]) -> dict[str, str]:
    store: dict[str, list[str]] = {}
    for t in texts:
        merge_texts(store, pack_texts(t))
    (packed,) = re.findall(r'id="soclab-texts" hidden data-gz="([A-Za-z0-9+/=]+)"', store_html(store))
    return json.loads(unpack_text(packed))


def test_the_extra_is_a_plain_summary_and_the_packed_detail() -> None:
    r, calls = _result()
    extra = item_html(r, calls)
    assert "3 tool calls · guard: 0 denied, 1 would deny" in extra
    assert "doc-39" not in extra  # the bulk is packed, not in the page as markup
    assert _detail(extra) == item_detail_html(r, calls)


def test_every_tool_result_is_shown_whole_where_the_results_file_keeps_an_excerpt() -> None:
    r, calls = _result()
    assert len(json.dumps(BIG)) > EXCERPT_LIMIT and r.transcript[0]["result_excerpt"].endswith("…")
    extra = item_extra(r, calls)
    detail = _detail(extra.html)
    (ref,) = re.findall(r"<pre class='r' data-ref='(\w+)'></pre>", detail)  # the long result, by reference
    assert json.loads(_store(extra.texts)[ref]) == BIG  # whole: past the excerpt's end
    assert "<details><summary><span class='pv'></span>… <span class='size'>(" in detail
    assert "would deny" in detail and "wipe_host is destructive" in detail
    assert "pre class='r err'" in detail  # an error body is marked as one


def test_copies_of_a_result_are_stored_once() -> None:
    r1, calls = _result()
    r2, _ = _result()
    r2.mode = "protected"
    t1, t2 = item_extra(r1, calls).texts, item_extra(r2, calls).texts
    assert t1.keys() == t2.keys() and len(_store(t1, t2)) == len(t1) == 1


def test_agent_and_result_text_is_escaped() -> None:
    r, calls = _result()
    detail = _detail(item_html(r, calls))
    assert "<script>" not in detail and "&lt;script&gt;" in detail
    assert "<b>unknown</b>" not in detail and "&lt;b&gt;unknown&lt;/b&gt;" in detail


def test_the_raw_findings_are_split_from_the_markdown_and_laid_out() -> None:
    r, calls = _result()
    markdown, findings = split_findings(r.report)
    assert markdown.endswith("</script>") and findings == {"implicated_hosts": ["web-01"]}
    detail = _detail(item_html(r, calls))
    assert """<h3>raw findings</h3><pre class='f'>{"implicated_hosts": ["web-01"]}</pre>""" in detail
    assert split_findings("no findings\n\n{not json") == ("no findings\n\n{not json", None)


def test_a_result_read_back_from_a_results_file_shows_its_excerpt() -> None:
    r, _ = _result()
    detail = item_detail_html(r, None)
    assert "excerpt; sha256 " + r.transcript[0]["result_sha256"] in detail


def test_the_page_carries_the_unpacking_script_once() -> None:
    assets = page_assets()
    assert "DecompressionStream('gzip')" in assets and "soclab_open" in assets


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=12), inner, max_size=6),
    max_leaves=60,
)


@given(json_values)
def test_pretty_json_changes_only_the_layout(value: object) -> None:
    assert json.loads(pretty_json(value)) == json.loads(json.dumps(value))


@given(st.text())
def test_packing_round_trips(text: str) -> None:
    assert unpack_text(pack_text(text)) == text
