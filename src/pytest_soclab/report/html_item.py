"""One item's extra in the HTML report: a plain summary line, and everything else packed.

The packed detail holds the checkpoints, the oracles, the agent's report with its raw
findings, and the transcript with every tool call's arguments and result in full
(taken from the item's calls; a result read back from a results file has only its
excerpt). A long value is not in the detail but in the report's one text store
(`report/html_store.py`), referenced by its digest: the baseline and protected runs of
a scenario, and its repeats, return much the same results, which are then stored once,
side by side, where gzip finds their likeness. The page's script puts each text in its
`<pre data-ref>` as text, never as markup.

Everything else that came from an agent or a scenario file is escaped (a report is
attacker-influenced text); the agent's markdown is rendered with raw HTML disabled.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape
from typing import Any

from markdown_it import MarkdownIt

from pytest_soclab.report.cost import item_usage_html
from pytest_soclab.models import ItemResult, ToolCall
from pytest_soclab.report.packed import pack_text

INLINE = 240  # a result up to this many characters is shown whole
ARGS_INLINE = 1000  # arguments (queries, mostly) are read whole up to this
PREVIEW = 160  # of a longer value, this many characters head its toggle
WIDTH = 100  # a JSON container that fits in this many columns stays on one line


@dataclass
class ItemExtra:
    """The item's extra, and the long texts it refers to: {digest: [sort key, text]}."""

    html: str
    texts: dict[str, list[str]] = field(default_factory=dict)


def item_extra(r: ItemResult, calls: Sequence[ToolCall] | None = None) -> ItemExtra:
    """What a glance needs in plain HTML, the detail packed (see html_client.py), the long texts apart."""
    texts: dict[str, list[str]] = {}
    detail = _Detail(r, texts).html(calls)
    html = (
        f'<div class="soclab-item">{summary_html(r)}'
        f'<div class="soclab-packed" data-gz="{pack_text(detail)}"></div></div>'
    )
    return ItemExtra(html, texts)


def item_html(r: ItemResult, calls: Sequence[ToolCall] | None = None) -> str:
    return item_extra(r, calls).html


def summary_html(r: ItemResult) -> str:
    parts = []
    if r.error:
        parts.append(f"<p class='fail'>error: {escape(r.error)}</p>")
    parts.append(
        f"<p>{r.tool_calls} tool calls · guard: {r.denied_calls} denied, {r.shadow_denials} would deny · "
        f"{r.false_blocks} false blocks of {r.legit_attempted} legitimate actions · "
        f"{r.destructive_executed} destructive actions executed</p>"
    )
    parts.append(item_usage_html(r))
    return "".join(parts)


def item_detail_html(r: ItemResult, calls: Sequence[ToolCall] | None = None) -> str:
    """Checkpoints, oracles, report and transcript, with nothing cut (long texts referenced)."""
    return _Detail(r, {}).html(calls)


def _checkpoints(r: ItemResult) -> str:
    if not r.checkpoints:
        return ""
    parts = [
        "<h3>checkpoints</h3><table><colgroup><col class='dim'><col class='pts'><col class='verdict'><col><col>"
        "</colgroup><tr><th>dim</th><th>points</th><th>verdict</th><th>check</th><th>justification</th></tr>"
    ]
    for c in r.checkpoints:
        parts.append(
            f"<tr><td>{escape(c.dim)}</td><td>{c.awarded:g}/{c.points:g}</td><td>{escape(c.verdict)}</td>"
            f"<td>{escape(c.check)}</td><td>{escape(c.justification)}</td></tr>"
        )
    parts.append("</table>")
    return "".join(parts)


def _oracles(r: ItemResult) -> str:
    if not r.oracles:
        return ""
    parts = [
        "<h3>oracles</h3><table><colgroup><col class='oracle'><col class='ok'><col><col></colgroup>"
        "<tr><th>oracle</th><th></th><th>expected</th><th>actual</th></tr>"
    ]
    for o in r.oracles:
        verdict = '<span class="pass">PASS</span>' if o.passed else '<span class="fail">FAIL</span>'
        parts.append(
            f"<tr><td>{escape(o.id)}</td><td>{verdict}</td><td>{escape(o.expected)}</td><td>{escape(o.actual)}</td></tr>"
        )
    parts.append("</table>")
    return "".join(parts)


def render_markdown(text: str) -> str:
    return MarkdownIt("commonmark", {"html": False}).render(text)


def split_findings(text: str) -> tuple[str, dict[str, Any] | None]:
    """The report's markdown, and the findings object `AgentReport.text()` appends to it (if any)."""
    head, sep, tail = text.rpartition("\n\n")
    if not sep or not tail.lstrip().startswith("{"):
        return text, None
    try:
        findings = json.loads(tail)
    except ValueError:
        return text, None
    return (head, findings) if isinstance(findings, dict) else (text, None)


class _Detail:
    """The packed detail of one item; long values go to `texts`, keyed by their digest."""

    def __init__(self, r: ItemResult, texts: dict[str, list[str]]):
        self.r = r
        self.texts = texts

    def html(self, calls: Sequence[ToolCall] | None) -> str:
        r = self.r
        return "".join([_checkpoints(r), _oracles(r), self._report(r.report), self._transcript(calls)])

    def _report(self, text: str) -> str:
        if not text:
            return "<h3>report</h3><div class='md'><i>none</i></div>"
        markdown, findings = split_findings(text)
        out = f"<h3>report</h3><div class='md'>{render_markdown(markdown)}</div>"
        if findings is not None:
            out += f"<h3>raw findings</h3>{self._value(findings, 'f', 0, open_=True)}"
        return out

    def _transcript(self, calls: Sequence[ToolCall] | None) -> str:
        full = {c.seq: c for c in calls or ()}
        parts = [
            "<h3>transcript</h3><table><colgroup><col class='seq'><col class='tool'><col class='args'>"
            "<col class='guard'><col></colgroup>"
            "<tr><th>#</th><th>tool</th><th>arguments</th><th>guard</th><th>result</th></tr>"
        ]
        for c in self.r.transcript:
            call, seq = full.get(c["seq"]), c["seq"]
            if call is not None:
                body = call.result if call.ok else call.error
                result = self._value(body, "r" if call.ok else "r err", seq)
            else:  # read back from a results file: only the excerpt was kept
                result = (
                    f"<pre>{escape(c['result_excerpt'])}</pre><small>excerpt; sha256 {escape(c['result_sha256'])}</small>"
                )
            parts.append(
                f"<tr><td>{seq}</td><td>{escape(c['tool'])}</td><td>{self._value(c['args'], 'a', seq, ARGS_INLINE)}</td>"
                f"<td>{_guard(c)}</td><td>{result}</td></tr>"
            )
        parts.append("</table>")
        return "".join(parts)

    def _value(self, value: Any, cls: str, seq: int, inline: int = INLINE, open_: bool = False) -> str:
        """A JSON value in a `<pre>` (class `a` arguments, `r` a result, `r err` an error, `f` findings).

        Short: whole, in place. Long: a toggle whose summary the page fills with the value's
        start, the value itself in the text store.
        """
        compact = _dumps(value)
        if len(compact) <= inline:
            text = compact if len(compact) <= WIDTH else pretty_json(value)
            return f"<pre class='{cls}'>{escape(text, quote=False)}</pre>"
        text = pretty_json(value)
        ref = hashlib.sha256(text.encode()).hexdigest()[:20]
        r = self.r
        # Sorted by scenario, call and then mode and repeat: the copies of a result sit together.
        self.texts.setdefault(ref, [f"{r.scenario_id}\x00{cls}\x00{seq:06d}\x00{r.mode}\x00{r.repeat:04d}", text])
        return (
            f"<details{' open' if open_ else ''}><summary><span class='pv'></span>… "
            f"<span class='size'>({_size(len(compact))})</span></summary>"
            f"<pre class='{cls}' data-ref='{ref}'></pre></details>"
        )


def _guard(c: dict[str, Any]) -> str:
    g = c.get("guard")
    if g is None:
        return "-"
    if g["allow"]:
        out = f"allow {escape(', '.join(g['rule_ids']))}"
    else:
        cls, verdict = ("deny", "DENY") if g["enforced"] else ("shadow", "would deny")
        out = f"<span class='{cls}'>{verdict}</span> {escape(', '.join(g['rule_ids']))}"
        if g.get("reasons"):
            out += f"<br><small>{escape('; '.join(g['reasons']))}</small>"
    if g.get("error"):
        out += f"<br><small>engine error: {escape(str(g['error']))}</small>"
    if c.get("false_block"):
        out += " <span class='deny'>(false block)</span>"
    return out


def pretty_json(value: Any, level: int = 0) -> str:
    """JSON that reads: a container that fits in WIDTH columns, or a list of scalars (wrapped by
    the page), stays on one line; others open up. The same values as `json.dumps`, laid out.
    """
    compact = _dumps(value)
    if not isinstance(value, (dict, list, tuple)) or not value or len(compact) + 2 * level <= WIDTH:
        return compact
    if not isinstance(value, dict) and not any(isinstance(v, (dict, list, tuple)) for v in value):
        return compact
    pad, end = "  " * (level + 1), "  " * level
    if isinstance(value, dict):
        body = ",\n".join(f"{pad}{_dumps(str(k))}: {pretty_json(v, level + 1)}" for k, v in value.items())
        return "{\n" + body + "\n" + end + "}"
    body = ",\n".join(pad + pretty_json(v, level + 1) for v in value)
    return "[\n" + body + "\n" + end + "]"


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _size(chars: int) -> str:
    return f"{chars} chars" if chars < 10_000 else f"{chars / 1000:.0f}k chars"
