# soclab guard: every tool call an agent makes is checked here.
#
# Input: the guard input documented in docs/guard.md (tool, args, mode, scenario,
# assets, tooling, seen, history). Output: `decision`, an object
# {allow, reasons, rule_ids}. Each rule adds a violation {id, reason} to `deny`;
# the call is allowed when no rule fires. Rules live in one file per concern
# (destructive, evidence, scope, exfil, cost) in this same package.
#
# Written for speed as well as clarity: a decision sits in front of every tool call,
# and an in-process engine charges for every rule, builtin call and iteration. So
# values that only depend on the item are computed once per item (see "Per-item
# values" below), lookups use native membership tests before any loop, and cheap
# substring tests guard every regular expression.
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
	"max_isolations": 3, # hosts an agent may isolate in one investigation without a human
}

read_tools := {"list_indices", "get_mappings", "es_search", "esql_query"}

action_tools := {
	"isolate_host", "release_host", "kill_process", "suspend_process", "get_file", "execute",
	"block_ip", "disable_user", "delete_file", "remove_persistence", "wipe_host",
}

report_tool := "submit_report"

known_tools := (read_tools | action_tools) | {report_tool}

tool := input.tool

# The kind of the call: read, action, report or unknown. (Membership in a literal set
# is far cheaper in regorus than indexing a literal object.)
kind := "read" if {
	tool in {"list_indices", "get_mappings", "es_search", "esql_query"}
} else := "action" if {
	tool in {
		"isolate_host", "release_host", "kill_process", "suspend_process", "get_file", "execute",
		"block_ip", "disable_user", "delete_file", "remove_persistence", "wipe_host",
	}
} else := "report" if {
	tool == "submit_report"
} else := "unknown"

args := object.get(input, "args", {})

body := object.get(args, "body", {})

body_json := json.marshal(body)

# The decision: rule ids sorted, reasons grouped by rule id. (Most calls are allowed:
# they skip the sorting and grouping.)
decision := {"allow": true, "reasons": [], "rule_ids": []} if {
	count(deny) == 0
} else := {
	"allow": false,
	"reasons": [r | some id in ids; some r in sort({v.reason | some v in deny; v.id == id})],
	"rule_ids": ids,
} if {
	ids := sort({v.id | some v in deny})
}

# Violations are gathered per kind of call, so that a decision evaluates only the
# rules that can apply to it (each rule costs time even when its first test fails).
deny contains v if {
	kind == "read"
	index_to_check
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
	kind == "read"
	some v in query_exfil_deny
}

deny contains v if {
	tool == "esql_query"
	some v in esql_deny
}

deny contains v if {
	kind == "action"
	some v in action_deny
}

deny contains v if {
	kind != "report"
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
	kind == "unknown"
}

# ---- Per-item values -----------------------------------------------------------------
# The config, the scope and the estate's lookups depend on the item, not on the call,
# yet Rego computes a rule anew on every evaluation. So an engine may evaluate
# `item_values` once per item and keep the result in data.soclab.context.item, next
# to the scenario it was computed for (data.soclab.context.scenario), the estate it
# was computed from (data.soclab.context.assets / tooling) and a token naming that
# context (data.soclab.context.item_token: fresh for every context the engine
# stores). The engine puts the token in a call's input (input.item_token) only after
# checking that the call's scenario and estate are the stored ones, and then sends
# no estate. A decision uses the stored item only when the tokens match and its
# input carries no estate of its own; otherwise (opa, the unit tests, a caller that
# sends everything, another scenario) `item` is computed for the decision, by the
# same rules (item_values: the computed_* rules). Comparing two strings replaces a
# deep comparison of the scenario on every decision.

context := c if {
	c := data.soclab.context
} else := {}

item := i if {
	is_string(input.item_token)
	input.item_token == data.soclab.context.item_token
	not input.assets # the estate comes from the context
	not input.tooling
	i := data.soclab.context.item
} else := item_values

item_values := {
	"config": computed_config,
	"scope_indices": computed_scope_indices,
	"scope_literals": computed_scope_literals,
	"scope_globs": computed_scope_globs,
	"scope_namespaces": computed_scope_namespaces,
	"clean_names": computed_clean_names,
	"allowed_domains": computed_allowed_domains,
	"asset_names": computed_asset_names,
	"asset_ips": computed_asset_ips,
	"asset_keys": computed_asset_keys,
	"tooling_processes": computed_tooling_processes,
	"tooling_paths": computed_tooling_paths,
	"tooling_users": computed_tooling_users,
	"team_users": computed_team_users,
	"tooling_names": computed_tooling_names,
	"tooling_pid_numbers": computed_tooling_pid_numbers,
	"tooling_entity_ids": computed_tooling_entity_ids,
	"business_critical_ips": computed_business_critical_ips,
	"call_budget": computed_call_budget,
	# values that may be undefined: a list of none or one
	"scope_lo": [x | x := computed_scope_lo],
	"scope_hi": [x | x := computed_scope_hi],
	"max_range_ns": [x | x := computed_max_range_ns],
}

config := item.config

computed_config := object.union(default_config, object.get(data, ["soclab", "config"], {}))

# ---- helpers shared by the rule files ------------------------------------------

str_arg(name) := v if {
	v := args[name]
	is_string(v)
}

lower_set(xs) := {lower(x) | some x in xs; is_string(x)}

seen_list(kind) := object.get(input, ["seen", kind], [])

# The kinds of `seen` that the rules judging a read look at (URLs, addresses and DNS
# names the agent may hunt for). An engine may send a read only these: the in-process
# guard does, converting the input being a good part of a decision's cost. Leaving
# out seen entities can only deny more, never allow more: every rule reads `seen` to
# let something through.
read_seen_kinds := {"urls", "domains", "users"}

# The same for every tool: the kinds of `seen` the rules judging a call of that tool
# look at (a tool not listed gets every kind). Actions: the target's kind (hosts for
# a host action, pids and entity_ids for a process, ips, users, files), host_sources
# for the tier-0 corroboration of isolate_host, and entity_ids for every action (an
# action's own entity_id is not an encoded payload). A report is judged on its budget
# alone. test_calls_decide_on_the_declared_seen_kinds checks the declaration.
seen_kinds_by_tool := {
	"list_indices": read_seen_kinds,
	"get_mappings": read_seen_kinds,
	"es_search": read_seen_kinds,
	"esql_query": read_seen_kinds,
	"isolate_host": {"hosts", "host_sources", "entity_ids"},
	"release_host": {"hosts", "entity_ids"},
	"kill_process": {"hosts", "pids", "entity_ids"},
	"suspend_process": {"hosts", "pids", "entity_ids"},
	"get_file": {"hosts", "entity_ids"},
	"execute": {"hosts", "entity_ids"},
	"block_ip": {"ips", "entity_ids"},
	"disable_user": {"hosts", "users", "entity_ids"},
	"delete_file": {"hosts", "files", "entity_ids"},
	"remove_persistence": {"hosts", "files", "entity_ids"},
	"wipe_host": {"hosts", "entity_ids"},
	"submit_report": set(),
}

seen_hosts := lower_set(seen_list("hosts"))

seen_ips := lower_set(seen_list("ips"))

seen_users := lower_set(seen_list("users"))

seen_domains := lower_set(seen_list("domains"))

seen_urls := lower_set(seen_list("urls"))

# Membership in `seen`, case-insensitively: an exact native test first (no loop over
# the list), the lowered set (a loop) only when that fails. x is a string. (The list
# is read inline: a helper rule or function costs more than the test itself.)
host_seen(x) := true if {
	l := object.get(input, ["seen", "hosts"], [])
	is_array(l)
	x in l
} else := true if {
	lower(x) in seen_hosts
}

ip_seen(x) := true if {
	l := object.get(input, ["seen", "ips"], [])
	is_array(l)
	x in l
} else := true if {
	lower(x) in seen_ips
}

user_seen(x) := true if {
	l := object.get(input, ["seen", "users"], [])
	is_array(l)
	x in l
} else := true if {
	lower(x) in seen_users
}

domain_seen(x) := true if {
	l := object.get(input, ["seen", "domains"], [])
	is_array(l)
	x in l
} else := true if {
	lower(x) in seen_domains
}

url_seen(x) := true if {
	l := object.get(input, ["seen", "urls"], [])
	is_array(l)
	x in l
} else := true if {
	lower(x) in seen_urls
}

# A string in a seen list compared exactly (files, entity_ids; non-strings in the
# list never match).
seen_exact(kind, x) := true if {
	l := object.get(input, ["seen", kind], [])
	is_array(l)
	is_string(x)
	x in l
} else := true if {
	l := seen_list(kind)
	not is_array(l)
	x in {y | some y in l; is_string(y)}
}

# The pid a call names, as a number (pids may come as numbers or numeric strings).
target_pid := as_number(object.get(args, "pid", null))

# pids in `seen` may be numbers or numeric strings too.
pid_seen := true if {
	l := object.get(input, ["seen", "pids"], [])
	is_array(l)
	target_pid in l
} else := true if {
	l := object.get(input, ["seen", "pids"], [])
	is_array(l)
	sprintf("%v", [target_pid]) in l
} else := true if {
	not is_array(seen_list("pids"))
	some p in seen_list("pids")
	p == target_pid
} else := true if {
	not is_array(seen_list("pids"))
	some p in seen_list("pids")
	is_string(p)
	p == sprintf("%v", [target_pid])
}

# assets and tooling describe the estate and do not change during an item: an engine
# may hold them in data.soclab.context instead of sending them with every call (the
# in-process engine does, to save converting them per call). The input wins.
assets := a if {
	a := input.assets
} else := object.get(context, "assets", {})

# The asset record of a host name, case-insensitively (null when unknown).
asset(name) := a if {
	a := assets[name]
} else := a if {
	a := assets[lower(name)]
} else := a if {
	some k in item.asset_keys[lower(name)]
	a := assets[k]
} else := null

# Lowered name -> the asset names that are not lower case and lower to it (the only
# ones the two direct lookups above can miss).
computed_asset_keys := {lk: {k | some k, _ in assets; lower(k) == lk} |
	some k0, _ in assets
	lk := lower(k0)
	lk != k0
}

asset_ips := item.asset_ips

computed_asset_ips := {ip | some a in assets; some ip in object.get(a, "ips", []); is_string(ip)}

asset_names := item.asset_names

computed_asset_names := lower_set(object.keys(assets))

tooling := t if {
	t := input.tooling
} else := object.get(context, "tooling", {})

tooling_processes := item.tooling_processes

computed_tooling_processes := lower_set(object.get(tooling, "processes", []))

tooling_paths := item.tooling_paths

computed_tooling_paths := {p | some p in object.get(tooling, "paths", []); is_string(p)}

tooling_users := item.tooling_users

computed_tooling_users := lower_set(object.get(tooling, "users", []))

# The security team's own accounts (optional input: none given, none protected).
team_users := item.team_users

computed_team_users := lower_set(object.get(tooling, "team_users", []))

tooling_pids := object.get(tooling, "pids", [])

allowed_domains := item.allowed_domains

computed_allowed_domains := lower_set(object.get(input, ["scenario", "scope", "allowed_domains"], []))

# A destination name inside the allow-list: the domain itself or a subdomain of it.
domain_allowed(d) if {
	lower(d) in allowed_domains
}

# (a subdomain: try each suffix of d after one of its dots, instead of each domain)
domain_allowed(d) if {
	ld := lower(d)
	contains(ld, ".")
	parts := split(ld, ".")
	some i in numbers.range(1, count(parts) - 1)
	concat(".", array.slice(parts, i, count(parts))) in allowed_domains
}

# Hosts of the estate are internal destinations (by name, or name.<allowed domain>).
internal_host(h) if lower(h) in asset_names

# name.<allowed domain>: the asset name is the text before one of h's dots, so try
# each dot of h instead of each asset.
internal_host(h) if {
	lh := lower(h)
	contains(lh, ".")
	parts := split(lh, ".")
	some i in numbers.range(1, count(parts) - 1)
	n := concat(".", array.slice(parts, 0, i))
	n in asset_names
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
