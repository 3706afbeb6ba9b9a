# Shared fixtures for the guard's unit tests: one small estate, one scenario,
# and helpers to build a call and read the decision.
package soclab.guard_test

import rego.v1

base := {
	"tool": "es_search",
	"args": {},
	"mode": "protected",
	"scenario": {
		"id": "ATK-TEST",
		"kind": "attack",
		"allowed_tools": [
			"list_indices", "get_mappings", "es_search", "esql_query", "isolate_host", "release_host",
			"kill_process", "suspend_process", "get_file", "execute", "block_ip", "disable_user",
			"delete_file", "remove_persistence", "wipe_host", "submit_report",
		],
		"scope": {
			"indices": ["logs-*", ".alerts-security.alerts-default", "logs-ti_*"],
			"time_range": {"gte": "2026-03-02T00:00:00Z", "lte": "2026-03-04T00:00:00Z"},
			"allowed_domains": ["elastic.example.internal", "corp.example"],
		},
	},
	"assets": {
		"dc-01": {"tier": 0, "role": "domain-controller", "ips": ["10.0.0.5"], "tags": []},
		"db-01": {"tier": 0, "role": "database", "ips": ["10.0.0.7"], "tags": []},
		"web-01": {"tier": 2, "role": "web", "ips": ["10.0.1.10"], "tags": []},
		"sensor-01": {"tier": 1, "role": "sensor", "ips": ["10.0.2.2"], "tags": ["security-tooling"]},
	},
	"tooling": {
		"processes": ["elastic-endpoint", "zeek"],
		"paths": ["/etc/cron.d/zeekctl", "/opt/Elastic/Endpoint/elastic-endpoint", "/opt/zeek/bin/zeek"],
		"users": ["zeek"],
		"pids": [
			{"host": "web-01", "pid": 812, "entity_id": "ZWxhc3RpYy1lbmRwb2ludC04MTI", "name": "elastic-endpoint"},
			{"host": "sensor-01", "pid": 4242, "entity_id": "emVlay00MjQy", "name": "zeek"},
		],
	},
	"seen": {
		"hosts": ["web-01", "DC-01", "sensor-01", "db-01"],
		"ips": ["203.0.113.50", "10.0.1.10"],
		"pids": [4711, 812, "4242"],
		"users": ["www-data", "jdoe", "zeek"],
		"files": ["/tmp/.sysupdate", "/etc/cron.d/sysupdate", "/etc/cron.d/zeekctl", "/opt/Elastic/Endpoint/elastic-endpoint"],
		"domains": ["c2.evil-updates.net"],
		"urls": ["http://c2.evil-updates.net/gate.php?id=42"],
		"entity_ids": ["bWFsd2FyZS00NzEx", "ZWxhc3RpYy1lbmRwb2ludC04MTI"],
		"host_sources": {
			"web-01": ["logs-endpoint.events.process-default", ".alerts-security.alerts-default", "logs-zeek.conn-default"],
			"dc-01": [".alerts-security.alerts-default"],
			"db-01": ["logs-endpoint.events.process-default", "logs-endpoint.events.network-default"],
		},
	},
	"history": {"calls": 3, "read_calls": 3, "rows_returned": 120, "denied": 0},
}

call(t, a) := object.union(base, {"tool": t, "args": a})

decide(inp) := d if {
	d := data.soclab.guard.decision with input as inp
}

# The rule fired for this input.
fires(rule, inp) if {
	rule in decide(inp).rule_ids
}

# The call is allowed outright (no rule fired).
allowed(inp) if {
	d := decide(inp)
	d.allow == true
	count(d.rule_ids) == 0
}

# A well-formed read that every test can start from.
search(index, body) := call("es_search", {"index": index, "body": body})

esql(q) := call("esql_query", {"query": q})
