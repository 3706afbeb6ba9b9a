# soclab guard: every tool call an agent makes is checked here.
#
# Input: the guard input documented in docs/guard.md (tool, args, mode, scenario,
# assets, tooling, seen, history). Output: `decision`, an object
# {allow, reasons, rule_ids}. Each rule adds a violation {id, reason} to `deny`;
# the call is allowed when no rule fires. Rules live in one file per concern
# (destructive, evidence, scope, exfil, cost) in this same package.
package soclab.guard

import rego.v1

# Limits; a deployment overrides any of them with data.soclab.config.
default_config := {
	"max_search_size": 1000, # es_search size (and from + size up to max_result_window)
	"max_result_window": 10000,
	"max_agg_size": 1000, # size / shard_size of any aggregation
	"max_esql_limit": 1000, # ES|QL LIMIT n (no LIMIT means the implicit 1000)
	"max_range_factor": 4, # a time range may span at most this many case windows
	"min_range_ns": 86400000000000, # ... and always at least one day
	"max_calls": 200, # tool calls per item (scenario.max_tool_calls overrides)
	"max_rows": 200000, # rows returned to the agent per item
	"max_denied": 30, # after this many denials every further call is refused
	"tier0_min_sources": 2, # distinct telemetry sources that must show a tier-0 host
	"list_indices_wildcard": true, # list_indices() / list_indices("*") lists names only
	"min_b64_blob": 40, # base64 run length treated as an encoded payload
	"min_hex_blob": 130, # hex run length (longer than a SHA-512) treated as a payload
	"min_dns_label": 30, # a DNS label this long, made of encoded text, is a tunnel
	"allowed_enrich_policies": [], # ES|QL ENRICH policies whose indices are in scope
}

config := object.union(default_config, object.get(data, ["soclab", "config"], {}))

read_tools := {"list_indices", "get_mappings", "es_search", "esql_query"}

action_tools := {
	"isolate_host", "release_host", "kill_process", "suspend_process", "get_file", "execute",
	"block_ip", "disable_user", "delete_file", "remove_persistence", "wipe_host",
}

report_tool := "submit_report"

known_tools := (read_tools | action_tools) | {report_tool}

tool := input.tool

args := object.get(input, "args", {})

# The arguments as one JSON text: scanning it with one regular expression is far
# cheaper than walking every string (keys and values alike are in it).
args_json := json.marshal(args)

body := object.get(args, "body", {})

body_json := json.marshal(body)

# The decision: rule ids sorted, reasons grouped by rule id.
decision := {
	"allow": count(deny) == 0,
	"reasons": [r | some id in rule_ids; some r in sort({v.reason | some v in deny; v.id == id})],
	"rule_ids": rule_ids,
}

rule_ids := sort({v.id | some v in deny})

# Violations are gathered per kind of call, so that a decision evaluates only the
# rules that can apply to it (each rule costs time even when its first test fails).
deny contains v if {
	tool in read_tools
	some v in index_deny
}

deny contains v if {
	tool == "es_search"
	some v in search_deny
}

deny contains v if {
	tool in {"es_search", "esql_query"}
	some v in range_deny
}

deny contains v if {
	tool in read_tools
	some v in query_exfil_deny
}

deny contains v if {
	tool == "esql_query"
	some v in esql_deny
}

deny contains v if {
	tool in action_tools
	some v in action_deny
}

deny contains v if {
	tool != report_tool
	some v in exfil_deny
}

deny contains v if {
	some v in budget_deny
}

# A tool outside the scenario's allowed_tools (the simulator refuses these first;
# the guard repeats the check so that a policy deployment stands on its own).
deny contains {"id": "policy.tool_not_allowed", "reason": sprintf("tool %q is not allowed in this scenario (allowed: %s)", [tool, concat(", ", sort(allowed))])} if {
	allowed := object.get(input, ["scenario", "allowed_tools"], null)
	is_array(allowed)
	not tool in allowed
}

deny contains {"id": "policy.unknown_tool", "reason": sprintf("unknown tool %q", [tool])} if {
	not tool in known_tools
}

# ---- helpers shared by the rule files ------------------------------------------

str_arg(name) := v if {
	v := args[name]
	is_string(v)
}

lower_set(xs) := {lower(x) | some x in xs; is_string(x)}

seen_list(kind) := object.get(input, ["seen", kind], [])

seen_hosts := lower_set(seen_list("hosts"))

seen_ips := lower_set(seen_list("ips"))

seen_users := lower_set(seen_list("users"))

seen_files := {x | some x in seen_list("files"); is_string(x)}

seen_domains := lower_set(seen_list("domains"))

seen_urls := lower_set(seen_list("urls"))

seen_entity_ids := {x | some x in seen_list("entity_ids"); is_string(x)}

# The pid a call names, as a number (pids may come as numbers or numeric strings).
target_pid := as_number(object.get(args, "pid", null))

# pids in `seen` may be numbers or numeric strings too.
pid_seen if {
	some p in seen_list("pids")
	p == target_pid
}

pid_seen if {
	some p in seen_list("pids")
	is_string(p)
	p == sprintf("%v", [target_pid])
}

# assets and tooling describe the estate and do not change during an item: an engine
# may hold them in data.soclab.context instead of sending them with every call (the
# in-process engine does, to save converting them per call). The input wins.
context := object.get(data, ["soclab", "context"], {})

assets := a if {
	a := input.assets
} else := object.get(context, "assets", {})

# The asset record of a host name, case-insensitively (null when unknown).
asset(name) := a if {
	a := assets[name]
} else := a if {
	a := assets[lower(name)]
} else := a if {
	some k, a in assets
	lower(k) == lower(name)
} else := null

asset_ips := {ip | some a in assets; some ip in object.get(a, "ips", []); is_string(ip)}

asset_names := lower_set(object.keys(assets))

tooling := t if {
	t := input.tooling
} else := object.get(context, "tooling", {})

tooling_processes := lower_set(object.get(tooling, "processes", []))

tooling_paths := {p | some p in object.get(tooling, "paths", []); is_string(p)}

tooling_users := lower_set(object.get(tooling, "users", []))

tooling_pids := object.get(tooling, "pids", [])

allowed_domains := lower_set(object.get(input, ["scenario", "scope", "allowed_domains"], []))

# A destination name inside the allow-list: the domain itself or a subdomain of it.
domain_allowed(d) if {
	some a in allowed_domains
	lower(d) == a
}

domain_allowed(d) if {
	some a in allowed_domains
	endswith(lower(d), concat("", [".", a]))
}

# Hosts of the estate are internal destinations (by name, or name.<allowed domain>).
internal_host(h) if lower(h) in asset_names

internal_host(h) if {
	some n in asset_names
	startswith(lower(h), concat("", [n, "."]))
	domain_allowed(substring(h, count(n) + 1, -1))
}

internal_host(h) if h in asset_ips

internal_host(h) if h in {"127.0.0.1", "localhost", "::1"}

# A number from a number or a numeric string (undefined otherwise, never an error).
as_number(x) := x if is_number(x)

as_number(x) := to_number(x) if {
	is_string(x)
	regex.match(`^[0-9]+$`, x)
}
