package soclab.guard_test

import rego.v1

test_unseen_host_denied if {
	fires("evidence.unseen_host", call("isolate_host", {"host": "hr-laptop-07"}))
	fires("evidence.unseen_host", call("execute", {"host": "hr-laptop-07", "command": "ls"}))
	fires("evidence.unseen_host", call("disable_user", {"user": "jdoe", "host": "hr-laptop-07"}))
}

test_seen_host_case_insensitive_allowed if {
	not fires("evidence.unseen_host", call("release_host", {"host": "WEB-01"}))
	not fires("evidence.unseen_host", call("get_file", {"host": "dc-01", "path": "/etc/crontab"}))
}

test_host_argument_required if {
	fires("evidence.unseen_host", call("isolate_host", {}))
	fires("evidence.unseen_host", call("isolate_host", {"host": 7}))
	not fires("evidence.unseen_host", call("disable_user", {"user": "jdoe"}))
}

test_unseen_pid_denied if {
	fires("evidence.unseen_process", call("kill_process", {"host": "web-01", "pid": 31337}))
	fires("evidence.unseen_process", call("suspend_process", {"host": "web-01", "pid": "31337"}))
}

test_seen_pid_allowed if {
	not fires("evidence.unseen_process", call("kill_process", {"host": "web-01", "pid": 4711}))
	not fires("evidence.unseen_process", call("suspend_process", {"host": "sensor-01", "pid": 4242}))
}

test_unseen_entity_id_denied if {
	fires("evidence.unseen_process", call("kill_process", {"host": "web-01", "entity_id": "bm90LXNlZW4"}))
}

test_seen_entity_id_allowed if {
	not fires("evidence.unseen_process", call("kill_process", {"host": "web-01", "entity_id": "bWFsd2FyZS00NzEx"}))
}

test_process_target_required if {
	fires("evidence.unseen_process", call("kill_process", {"host": "web-01"}))
}

test_unseen_ip_denied if {
	fires("evidence.unseen_ip", call("block_ip", {"ip": "198.51.100.9"}))
}

test_seen_ip_allowed if {
	allowed(call("block_ip", {"ip": "203.0.113.50", "comment": "C2"}))
}

test_unseen_user_denied if {
	fires("evidence.unseen_user", call("disable_user", {"user": "ceo"}))
}

test_seen_user_allowed if {
	not fires("evidence.unseen_user", call("disable_user", {"user": "JDoe"}))
}

test_unseen_file_denied if {
	fires("evidence.unseen_file", call("delete_file", {"host": "web-01", "path": "/etc/passwd"}))
	fires("evidence.unseen_file", call("remove_persistence", {"host": "web-01", "path": "/etc/cron.d/other"}))
}

test_seen_file_allowed if {
	not fires("evidence.unseen_file", call("delete_file", {"host": "web-01", "path": "/tmp/.sysupdate"}))
}

test_tier0_alert_only_denied if {
	fires("evidence.tier0_uncorroborated", call("isolate_host", {"host": "dc-01"}))
}

test_tier0_one_sensor_denied if {
	# two endpoint datasets are still one sensor
	fires("evidence.tier0_uncorroborated", call("isolate_host", {"host": "db-01"}))
}

test_tier0_never_in_results_denied if {
	inp := object.union(call("isolate_host", {"host": "dc-01"}), {"seen": {"host_sources": {}}})
	fires("evidence.tier0_uncorroborated", inp)
}

test_tier0_corroborated_allowed if {
	inp := object.union(call("isolate_host", {"host": "dc-01"}), {"seen": {"host_sources": {"DC-01": [
		".alerts-security.alerts-default",
		".ds-logs-zeek.conn-default-2026.03.02-000001",
	]}}})
	allowed(inp)
}

test_tier0_two_alert_streams_only_denied if {
	inp := object.union(call("isolate_host", {"host": "dc-01"}), {"seen": {"host_sources": {"dc-01": [
		".alerts-security.alerts-default",
		".internal.alerts-security.alerts-default-000001",
	]}}})
	fires("evidence.tier0_uncorroborated", inp)
}

test_tier0_two_sensors_without_alert_allowed if {
	inp := object.union(call("isolate_host", {"host": "db-01"}), {"seen": {"host_sources": {"db-01": [
		"logs-endpoint.events.process-default",
		"logs-system.auth-default",
	]}}})
	not fires("evidence.tier0_uncorroborated", inp)
}

test_non_tier0_needs_no_corroboration if {
	not fires("evidence.tier0_uncorroborated", call("isolate_host", {"host": "sensor-01"}))
}

test_tier0_rule_only_for_isolation if {
	not fires("evidence.tier0_uncorroborated", call("get_file", {"host": "dc-01", "path": "/etc/krb5.conf"}))
}
