# Evidence before action: an agent acts only on what its own retrieved results
# showed it, and isolates a crown-jewel (tier-0) host only on corroborated evidence.
package soclab.guard

import rego.v1

# Action tools that name a host they act on (disable_user only when scoped to a host).
# (every action tool but block_ip)
host_action if {
	kind == "action"
	tool != "block_ip"
}

action_deny contains {"id": "evidence.unseen_host", "reason": sprintf("%s targets host %q, which never appeared in the evidence this agent retrieved", [tool, host])} if {
	host_action
	host := str_arg("host")
	not host_seen(host)
}

action_deny contains {"id": "evidence.unseen_host", "reason": sprintf("%s needs a host name (a string)", [tool])} if {
	host_action
	tool != "disable_user"
	not str_arg("host")
}

action_deny contains {"id": "evidence.unseen_process", "reason": sprintf("%s targets pid %v on %q, which never appeared in the evidence this agent retrieved", [tool, pid, object.get(args, "host", "")])} if {
	tool in {"kill_process", "suspend_process"}
	pid := object.get(args, "pid", null)
	pid != null
	not pid_seen
}

action_deny contains {"id": "evidence.unseen_process", "reason": sprintf("%s targets process.entity_id %q, which never appeared in the evidence this agent retrieved", [tool, eid])} if {
	tool in {"kill_process", "suspend_process"}
	object.get(args, "pid", null) == null
	eid := str_arg("entity_id")
	not seen_exact("entity_ids", eid)
}

action_deny contains {"id": "evidence.unseen_process", "reason": sprintf("%s needs a pid or an entity_id", [tool])} if {
	tool in {"kill_process", "suspend_process"}
	object.get(args, "pid", null) == null
	not str_arg("entity_id")
}

action_deny contains {"id": "evidence.unseen_ip", "reason": sprintf("block_ip targets %q, which never appeared in the evidence this agent retrieved", [ip])} if {
	tool == "block_ip"
	ip := object.get(args, "ip", "")
	not ip_seen(lower(sprintf("%v", [ip])))
}

action_deny contains {"id": "evidence.unseen_user", "reason": sprintf("disable_user targets %q, who never appeared in the evidence this agent retrieved", [user])} if {
	tool == "disable_user"
	user := object.get(args, "user", "")
	not user_seen(lower(sprintf("%v", [user])))
}

action_deny contains {"id": "evidence.unseen_file", "reason": sprintf("%s targets %q, which never appeared in the evidence this agent retrieved", [tool, path])} if {
	tool in {"delete_file", "remove_persistence"}
	path := object.get(args, "path", "")
	not seen_exact("files", path)
}

# Isolating a tier-0 asset takes a domain controller or a crown-jewel database off
# the network: the agent must have seen the host in at least
# config.tier0_min_sources distinct telemetry sources, one of them not an alert.
# A source is an integration (endpoint, zeek, suricata, system...) with every
# security alert counting as the single source "alerts": planted or spoofed alerts
# alone, or several datasets of one sensor, are not corroboration.
action_deny contains {"id": "evidence.tier0_uncorroborated", "reason": sprintf("isolate_host on tier-0 asset %q (%s) needs corroboration: seen in %d telemetry source(s) %v, needs %d including one that is not an alert", [host, object.get(a, "role", ""), count(srcs), sort(srcs), config.tier0_min_sources])} if {
	tool == "isolate_host"
	host := str_arg("host")
	a := asset(host)
	a != null
	object.get(a, "tier", 99) == 0
	srcs := host_source_kinds(host)
	not corroborated(srcs)
}

corroborated(srcs) if {
	count(srcs) >= config.tier0_min_sources
	count(srcs - {"alerts"}) >= 1
}

host_source_kinds(host) := {source_kind(s) |
	some k, streams in object.get(input, ["seen", "host_sources"], {})
	lower(k) == lower(host)
	some s in streams
	is_string(s)
}

# Data stream or backing index name -> the telemetry source it belongs to.
source_kind(s) := "alerts" if {
	regex.match(`(?i)(^|\.)alerts-`, s)
} else := m[1] if {
	m := regex.find_all_string_submatch_n(`^(?:\.ds-)?(?:logs|metrics|traces)-([a-z0-9_]+)`, lower(s), 1)[0]
} else := lower(s)
