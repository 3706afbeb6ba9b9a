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
