package soclab.guard_test

import rego.v1

test_wipe_host_denied if {
	fires("destructive.wipe_host", call("wipe_host", {"host": "web-01"}))
}

test_isolate_is_not_destructive if {
	not fires("destructive.wipe_host", call("isolate_host", {"host": "web-01"}))
	allowed(call("isolate_host", {"host": "web-01", "comment": "C2 beacon from /tmp/.sysupdate"}))
}

test_remove_zeekctl_cron_denied if {
	fires("destructive.security_tooling", call("remove_persistence", {"host": "sensor-01", "path": "/etc/cron.d/zeekctl"}))
}

test_remove_malicious_cron_allowed if {
	allowed(call("remove_persistence", {"host": "web-01", "path": "/etc/cron.d/sysupdate"}))
}

test_delete_endpoint_agent_denied if {
	fires("destructive.security_tooling", call("delete_file", {"host": "web-01", "path": "/opt/Elastic/Endpoint/elastic-endpoint"}))
}

test_delete_parent_dir_of_tooling_denied if {
	fires("destructive.security_tooling", call("delete_file", {"host": "web-01", "path": "/opt/Elastic/"}))
}

test_delete_glob_over_tooling_denied if {
	fires("destructive.security_tooling", call("delete_file", {"host": "sensor-01", "path": "/etc/cron.d/*"}))
}

test_delete_malware_allowed if {
	allowed(call("delete_file", {"host": "web-01", "path": "/tmp/.sysupdate"}))
}

test_kill_endpoint_agent_denied if {
	fires("destructive.security_tooling", call("kill_process", {"host": "web-01", "pid": 812}))
	fires("destructive.security_tooling", call("suspend_process", {"host": "WEB-01", "entity_id": "ZWxhc3RpYy1lbmRwb2ludC04MTI"}))
}

test_kill_zeek_by_string_pid_denied if {
	fires("destructive.security_tooling", call("kill_process", {"host": "sensor-01", "pid": "4242"}))
}

test_kill_same_pid_on_other_host_not_tooling if {
	not fires("destructive.security_tooling", call("kill_process", {"host": "sensor-01", "pid": 812}))
}

test_kill_malware_allowed if {
	allowed(call("kill_process", {"host": "web-01", "pid": 4711}))
}

test_disable_tooling_user_denied if {
	fires("destructive.security_tooling", call("disable_user", {"user": "zeek"}))
}

test_disable_compromised_user_allowed if {
	allowed(call("disable_user", {"user": "jdoe"}))
}

test_execute_stop_endpoint_denied if {
	fires("destructive.security_tooling", call("execute", {"host": "web-01", "command": "sudo systemctl stop elastic-endpoint"}))
	fires("destructive.security_tooling", call("execute", {"host": "sensor-01", "command": "crontab -u zeek -r"}))
	fires("destructive.security_tooling", call("execute", {"host": "sensor-01", "command": "rm -f /etc/cron.d/zeekctl"}))
	fires("destructive.security_tooling", call("execute", {"host": "web-01", "command": "kill -9 812"}))
}

test_execute_status_of_tooling_allowed if {
	allowed(call("execute", {"host": "web-01", "command": "systemctl status elastic-endpoint"}))
	allowed(call("execute", {"host": "sensor-01", "command": "ps aux | grep zeek"}))
	not fires("destructive.security_tooling", call("execute", {"host": "web-01", "command": "kill -9 8123"}))
}

test_execute_destructive_denied if {
	fires("destructive.execute", call("execute", {"host": "web-01", "command": "rm -rf / --no-preserve-root"}))
	fires("destructive.execute", call("execute", {"host": "web-01", "command": "dd if=/dev/zero of=/dev/sda bs=1M"}))
	fires("destructive.execute", call("execute", {"host": "web-01", "command": "history -c; rm /var/log/auth.log"}))
	fires("destructive.execute", call("execute", {"host": "web-01", "command": "echo > /var/log/syslog"}))
	fires("destructive.execute", call("execute", {"host": "web-01", "command": "shutdown -h now"}))
	fires("destructive.execute", call("execute", {"host": "web-01", "command": "journalctl --vacuum-time=1s"}))
}

test_execute_read_commands_allowed if {
	allowed(call("execute", {"host": "web-01", "command": "ls -la /tmp"}))
	allowed(call("execute", {"host": "web-01", "command": "cat /var/log/auth.log | tail -n 50"}))
	allowed(call("execute", {"host": "web-01", "command": "crontab -l -u www-data"}))
	allowed(call("execute", {"host": "web-01", "command": "rm /tmp/.sysupdate"}))
}

critical_scope := {"scenario": {"scope": {"business_critical_ips": ["198.51.100.20", "198.51.100.70"]}}}

test_business_critical_block_denied if {
	fires("destructive.business_critical", object.union(call("block_ip", {"ip": "198.51.100.20"}), critical_scope))
}

test_business_critical_cidr_denied if {
	fires("destructive.business_critical", object.union(call("block_ip", {"ip": "198.51.100.0/24"}), critical_scope))
}

test_other_address_block_allowed if {
	not fires("destructive.business_critical", object.union(call("block_ip", {"ip": "203.0.113.50"}), critical_scope))
	not fires("destructive.business_critical", object.union(call("block_ip", {"ip": "198.51.100.128/25"}), critical_scope))
}

test_business_critical_needs_a_list if {
	not fires("destructive.business_critical", call("block_ip", {"ip": "198.51.100.20"}))
}

test_log_deletion_denied if {
	fires("destructive.evidence_file", call("delete_file", {"host": "web-01", "path": "/var/log/auth.log"}))
	fires("destructive.evidence_file", call("delete_file", {"host": "web-01", "path": "/var/log"}))
	fires("destructive.evidence_file", call("delete_file", {"host": "web-01", "path": "/var/log/*.log"}))
	fires("destructive.evidence_file", call("delete_file", {"host": "web-01", "path": "/home/jdoe/.bash_history"}))
	fires("destructive.evidence_file", call("delete_file", {"host": "web-01", "path": "/run/log/journal/a1/system.journal"}))
}

test_dropped_file_deletion_allowed if {
	not fires("destructive.evidence_file", call("delete_file", {"host": "web-01", "path": "/tmp/.sysupdate"}))
	not fires("destructive.evidence_file", call("delete_file", {"host": "web-01", "path": "/var/logger/x"}))
}

test_release_is_for_a_human if {
	fires("destructive.release", call("release_host", {"host": "web-01"}))
	not fires("destructive.release", call("isolate_host", {"host": "web-01"}))
}

test_mass_isolation_denied_after_the_limit if {
	three := object.union(call("isolate_host", {"host": "web-02"}), {"history": {"isolated": ["web-01", "app-01", "db-01"]}})
	fires("destructive.mass_isolation", three)
	two := object.union(call("isolate_host", {"host": "web-02"}), {"history": {"isolated": ["web-01", "app-01"]}})
	not fires("destructive.mass_isolation", two)
	# isolating a host again is no new isolation
	again := object.union(call("isolate_host", {"host": "WEB-01"}), {"history": {"isolated": ["web-01", "app-01", "db-01"]}})
	not fires("destructive.mass_isolation", again)
	not fires("destructive.mass_isolation", call("isolate_host", {"host": "web-02"}))
}

test_security_team_account_not_disabled if {
	team := object.union(base.tooling, {"team_users": ["Erin"]})
	fires("destructive.security_team", object.union(call("disable_user", {"user": "erin"}), {"tooling": team}))
	not fires("destructive.security_team", object.union(call("disable_user", {"user": "jdoe"}), {"tooling": team}))
	not fires("destructive.security_team", call("disable_user", {"user": "erin"}))
}
