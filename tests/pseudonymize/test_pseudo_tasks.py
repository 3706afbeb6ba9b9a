"""Task files: the pseudonymized answer key still validates and still answers the pseudonymized case."""

from __future__ import annotations

import ipaddress
import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pseudo_samples import ATTACKER_IP, NAME_TOKENS, documents, task

from pytest_soclab.agents.analyst.untrusted import strings as _strings  # every string in a JSON value
from pytest_soclab.models.common import ActionRef
from pytest_soclab.models.task import Task
from pytest_soclab.pseudonymize import Pseudonymizer

KEY = b"tasks-test-key-0123456789abcd"


def release(key: bytes = KEY) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """What `soclab pseudonymize` does with a case and its task: learn from both, then transform."""
    p = Pseudonymizer(key)
    docs, t = documents(), task()
    p.learn_documents(docs)
    p.learn_task(t)
    return [p.document(d, learn=False) for d in docs], p.task(t, learn=False)


def _without_subdomain(dns: Any) -> Any:
    if not isinstance(dns, dict):
        return dns
    question = {k: v for k, v in (dns.get("question") or {}).items() if k != "subdomain"}
    return {**dns, "question": question}


def _contains(doc: dict[str, Any], needle: str) -> bool:
    n = needle.lower()
    return any(n in s.lower() for s in _strings(doc))


def _answer_strings(t: dict[str, Any]) -> list[str]:
    gt = t["ground_truth"]
    out = [ke["must_find"] for ke in gt["key_evidence"]] + list(gt["iocs"]) + list(gt["implicated_hosts"])
    out.append(gt["attacker_ip"])
    for cp in t["scoring"]["checkpoints"]:
        ex = cp.get("expect") or {}
        out += ex.get("terms", []) + ex.get("any_terms", []) + ex.get("forbid", [])
    return out


def test_the_pseudonymized_task_still_validates() -> None:
    _, new = release()
    Task.model_validate(new)
    assert new["id"] == "task-01" and new["source_case"] == "case-01-recon"
    assert new["ground_truth"]["techniques"] == ["T1105", "T1078"]
    assert [ke["source"] for ke in new["ground_truth"]["key_evidence"]] == [
        ke["source"] for ke in task()["ground_truth"]["key_evidence"]
    ]
    assert new["scoring"]["checkpoints"][0]["points"] == 20


def test_every_answer_string_found_before_is_found_after() -> None:
    """The consistency property: must_find, IOCs, hosts and expect terms that a document contains
    before pseudonymization, the pseudonymized document contains after."""
    docs, t = documents(), task()
    new_docs, new_t = release()
    pairs = list(zip(_answer_strings(t), _answer_strings(new_t)))
    checked = 0
    for before, after in zip(docs, new_docs):
        for s, ps in pairs:
            if _contains(before, s):
                assert _contains(after, ps), (s, ps)
                checked += 1
    assert checked >= 20  # the property was exercised, not vacuous


def test_regex_patterns_still_match_what_they_matched() -> None:
    docs, t = documents(), task()
    new_docs, new_t = release()
    pats = [p for cp in t["scoring"]["checkpoints"] for p in (cp.get("expect") or {}).get("patterns", [])]
    new_pats = [
        p for cp in new_t["scoring"]["checkpoints"] for p in (cp.get("expect") or {}).get("patterns", [])
    ]
    hits = 0
    for before, after in zip(docs, new_docs):
        text_b, text_a = "\n".join(_strings(before)), "\n".join(_strings(after))
        for p, q in zip(pats, new_pats):
            if re.search(p, text_b):
                assert re.search(q, text_a), (p, q)
                hits += 1
    assert hits >= 4


def test_no_original_name_survives_in_the_task() -> None:
    _, new = release()
    blob = json.dumps(new).lower()
    leaked = [o for o in NAME_TOKENS if re.search(rf"(?<![\w.-]){re.escape(o)}(?![\w-])", blob)]
    assert leaked == []
    assert ATTACKER_IP not in blob and "185\\\\.220" not in blob


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_cut_outs_of_documents_stay_consistent(data: st.DataObject) -> None:
    """Any whole-token slice of any document string (a must_find the task author could have written)
    pseudonymizes to a string of the pseudonymized document."""
    docs = documents()
    p = Pseudonymizer(KEY)
    p.learn_documents(docs)
    i = data.draw(st.integers(min_value=0, max_value=len(docs) - 1))
    # Left out: dns.question.subdomain. Its labels are replaced in that field (and in the full
    # name), but a label alone is not learned as a name (docs/pseudonymize.md, limits): learning
    # every DNS label would replace common words ("logs", "security") everywhere.
    strings = _strings({k: v for k, v in docs[i].items() if k != "dns"} | {"dns": _without_subdomain(docs[i].get("dns"))})
    s = data.draw(st.sampled_from(strings))
    tokens = re.split(r"(\s+)", s)
    a = data.draw(st.integers(min_value=0, max_value=len(tokens) - 1))
    b = data.draw(st.integers(min_value=a + 1, max_value=len(tokens)))
    cut = "".join(tokens[a:b]).strip()
    if not cut:
        return
    assert _contains(p.document(docs[i], learn=False), p.text(cut))


# ---------------------------------------------------------------- a deterministic agent, scored


def _is_public(ip: str) -> bool:
    try:
        return ipaddress.ip_address(ip).is_global
    except ValueError:
        return False


def playbook_agent(
    trigger: dict[str, Any], docs: list[dict[str, Any]]
) -> tuple[str, list[tuple[str, dict]], str]:
    """Pivots from the alerted host to its addresses, to the public addresses they talked to, to the
    names those resolve to; reports what it saw and blocks/isolates. Returns (report, actions, retrieved)."""
    host = trigger["pivot"]["host.name"].lower()
    retrieved: list[dict[str, Any]] = []

    def search(pred) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
        hits = [d for d in docs if pred(d)]
        retrieved.extend(hits)
        return hits

    on_host = search(lambda d: str(d.get("host", {}).get("name", "")).lower() == host)
    host_ips = {ip for d in on_host for ip in d.get("host", {}).get("ip", [])}
    peers = search(
        lambda d: d.get("source", {}).get("ip") in host_ips or d.get("destination", {}).get("ip") in host_ips
    )
    public = sorted(
        {
            ip
            for d in on_host + peers
            for side in ("source", "destination")
            for ip in [d.get(side, {}).get("ip")]
            if ip and _is_public(ip)
        }
    )
    names = sorted({d["dns"]["question"]["name"] for d in peers if "dns" in d})
    files = sorted({d["file"]["path"] for d in on_host if "file" in d})
    users = sorted({d["user"]["name"] for d in on_host if "user" in d and "name" in d["user"]})
    # It does not report the files it saw: the correlation checkpoint gets partial credit only.
    report = (
        f"# Findings\nHost {trigger['pivot']['host.name']} contacted {', '.join(public)} "
        f"({', '.join(names)}). Users: {', '.join(users)}. {len(files)} file(s) written."
    )
    actions = [("block_ip", {"ip": ip}) for ip in public[:1]] + [
        ("isolate_host", {"host": trigger["pivot"]["host.name"]})
    ]
    return report, actions, json.dumps(retrieved)


def score(
    t: dict[str, Any], report: str, actions: list[tuple[str, dict]], retrieved: str
) -> dict[str, float]:
    """The task's machine-checkable expectations, judged the way the rules judge reads them."""
    dims: dict[str, float] = {}
    rep, ret = report.lower(), retrieved.lower()
    for cp in t["scoring"]["checkpoints"]:
        ex = cp.get("expect") or {}
        where = ex.get("where", ["report"])
        hay = " ".join(h for w, h in (("report", rep), ("retrieved", ret)) if w in where)
        checks = [
            term.lower() in hay and (term.lower() in ret or not ex.get("grounded", True))
            for term in ex.get("terms", [])
        ]
        if ex.get("any_terms"):
            checks.append(any(term.lower() in hay for term in ex["any_terms"]))
        checks += [re.search(p, report + "\n" + retrieved) is not None for p in ex.get("patterns", [])]
        checks += [
            any(ActionRef.model_validate(a).matches(tool, args) for tool, args in actions)
            for a in ex.get("actions", [])
        ]
        if any(term.lower() in rep for term in ex.get("forbid", [])):
            checks.append(False)
        credit = 1.0 if all(checks) else 0.5 if any(checks) else 0.0
        dims[cp["dim"]] = dims.get(cp["dim"], 0.0) + credit * cp["points"]
    evidence = t["ground_truth"]["key_evidence"]
    dims["key_evidence_found"] = sum(ke["must_find"].lower() in ret for ke in evidence) / len(evidence)
    return dims


def test_a_deterministic_agent_scores_the_same_on_the_pseudonymized_case() -> None:
    docs, t = documents(), task()
    original = score(t, *playbook_agent(t["trigger"], docs))
    new_docs, new_t = release()
    pseudo = score(new_t, *playbook_agent(new_t["trigger"], new_docs))
    assert pseudo == original
    total = sum(v for k, v in original.items() if k != "key_evidence_found")
    assert 0 < total < 100  # neither vacuous nor trivially perfect: partial credit must also agree
    assert original["key_evidence_found"] > 0


@pytest.mark.parametrize("keep_special", [True])
def test_required_actions_match_the_pseudonymized_calls(keep_special: bool) -> None:
    p = Pseudonymizer(KEY, keep_special_ranges=keep_special)
    t = task()
    p.learn_documents(documents())
    new = p.task(t)
    required = [ActionRef.model_validate(a) for a in new["expected_response"]["required_actions"]]
    calls = [
        ("block_ip", {"ip": p.ip(ATTACKER_IP), "comment": "c2"}),
        ("isolate_host", {"host": p.text("web-01")}),
    ]
    assert all(any(r.matches(tool, args) for tool, args in calls) for r in required)
    penalized = ActionRef.model_validate(new["expected_response"]["penalized_actions"][0])
    assert penalized.matches("wipe_host", {"host": p.text("WEB-01")})


def test_globs_in_action_arguments() -> None:
    p = Pseudonymizer(KEY)
    p.learn_host("web-01")
    t = task()
    t["expected_response"]["penalized_actions"] = [
        {"tool": "block_ip", "args": {"ip": "10.20.*"}},
        {"tool": "wipe_host", "args": {"host": ["web-01", "db-*"]}},
    ]
    new = p.task(t)
    ref = ActionRef.model_validate(new["expected_response"]["penalized_actions"][0])
    assert ref.matches("block_ip", {"ip": p.ip("10.20.1.15")})
    assert not ref.matches("block_ip", {"ip": p.ip("10.21.1.15")})
    assert new["expected_response"]["penalized_actions"][1]["args"]["host"] == [p.name("web-01"), "db-*"]
