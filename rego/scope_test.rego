package soclab.guard_test

import rego.v1

test_search_in_scope_allowed if {
	allowed(search("logs-endpoint.events.process-default", {"size": 10}))
	allowed(search("logs-endpoint.*,logs-zeek.*", {}))
	allowed(search(".alerts-security.alerts-default", {}))
	allowed(search("logs-*,-logs-zeek.*", {}))
	allowed(search("logs-*::data", {}))
	allowed(call("get_mappings", {"index": "logs-ti_abusech.malware-default"}))
}

test_security_index_denied if {
	fires("scope.system_index", search(".security-7", {}))
	fires("scope.system_index", search("logs-*, .security*", {}))
	fires("scope.system_index", call("get_mappings", {"index": ".security"}))
}

test_system_and_hidden_indices_denied if {
	fires("scope.system_index", search(".kibana_1", {}))
	fires("scope.system_index", search(".ds-logs-endpoint.events.process-default-2026.03.02-000001", {}))
	fires("scope.system_index", search(".internal.alerts-security.alerts-default-000001", {}))
	fires("scope.system_index", call("list_indices", {"pattern": ".*"}))
}

test_alerts_of_another_space_denied if {
	fires("scope.system_index", search(".alerts-security.alerts-other-space", {}))
}

test_all_indices_denied if {
	fires("scope.all_indices", search("*", {}))
	fires("scope.all_indices", search("_all", {}))
	fires("scope.all_indices", search("", {}))
	fires("scope.all_indices", search("*,-.security*", {}))
	fires("scope.all_indices", search("-logs-zeek.*", {}))
	fires("scope.all_indices", call("es_search", {"body": {}}))
	fires("scope.all_indices", call("get_mappings", {"index": "**"}))
}

test_outside_scope_denied if {
	fires("scope.index_outside", search("metrics-system.cpu-default", {}))
	fires("scope.index_outside", search("l*", {}))
	fires("scope.index_outside", search("logs*", {}))
	fires("scope.index_outside", search("*-default", {}))
	fires("scope.index_outside", search("customer-pii", {}))
	fires("scope.index_outside", search(7, {}))
}

test_failure_store_and_date_math_denied if {
	fires("scope.index_outside", search("logs-*::failures", {}))
	fires("scope.index_outside", search("<logs-{now/d}>", {}))
	fires("scope.index_outside", search("%3Clogs-%7Bnow%2Fd%7D%3E", {}))
}

test_remote_cluster_denied if {
	fires("scope.remote_cluster", search("prod:logs-*", {}))
	fires("scope.remote_cluster", search("logs-*,*:logs-*", {}))
}

test_terms_lookup_outside_scope_denied if {
	body := {"query": {"terms": {"user.name": {"index": ".security-7", "id": "admin", "path": "roles"}}}}
	fires("scope.system_index", search("logs-*", body))
}

test_terms_lookup_inside_scope_allowed if {
	body := {"query": {"terms": {"source.ip": {"index": "logs-ti_abusech.ip-default", "id": "x1", "path": "threat.indicator.ip"}}}}
	allowed(search("logs-*", body))
}

test_terms_on_index_field_is_not_a_lookup if {
	allowed(search("logs-*", {"query": {"terms": {"_index": ["customer-pii"]}}}))
}

test_more_like_this_doc_outside_denied if {
	body := {"query": {"more_like_this": {"fields": ["message"], "like": [{"_index": "hr-records", "_id": "1"}]}}}
	fires("scope.index_outside", search("logs-*", body))
}

test_indices_boost_outside_denied if {
	fires("scope.index_outside", search("logs-*", {"indices_boost": [{"hr-records": 2}]}))
	fires("scope.system_index", search("logs-*", {"indices_boost": {".security": 2}}))
}

test_list_indices if {
	allowed(call("list_indices", {}))
	allowed(call("list_indices", {"pattern": "*"}))
	allowed(call("list_indices", {"pattern": "logs-*"}))
	fires("scope.system_index", call("list_indices", {"pattern": ".security*"}))
	fires("scope.all_indices", call("list_indices", {"pattern": "*"})) with data.soclab.config as {"list_indices_wildcard": false}
}

test_esql_in_scope_allowed if {
	allowed(esql("FROM logs-endpoint.events.process-default | WHERE host.name == \"web-01\" | LIMIT 20"))
	allowed(esql("from logs-*, .alerts-security.alerts-default METADATA _id, _index | stats c = count(*) by host.name"))
	allowed(esql("FROM \"logs-zeek.*\" | KEEP source.ip"))
	allowed(esql("ROW a = 1"))
	allowed(esql("SHOW INFO"))
	allowed(esql("// look at processes\nFROM logs-* /* all of them */ | LIMIT 5"))
}

test_esql_outside_denied if {
	fires("scope.system_index", esql("FROM .security-7 | LIMIT 10"))
	fires("scope.system_index", esql("FROM logs-*, .kibana | LIMIT 10"))
	fires("scope.all_indices", esql("FROM * | LIMIT 10"))
	fires("scope.remote_cluster", esql("FROM logs-*,remote:logs-* | LIMIT 10"))
	fires("scope.index_outside", esql("FROM hr-records"))
	fires("scope.index_outside", esql("TS metrics-system.cpu-default | LIMIT 1"))
}

test_esql_comment_tricks_denied if {
	fires("scope.system_index", esql("/* innocent */ FROM .security | LIMIT 1"))
	fires("scope.system_index", esql("FROM logs-* // comment\n, .security | LIMIT 1"))
	fires("scope.system_index", esql("FROM logs-* | WHERE a == \"/*\" | LOOKUP JOIN .security ON user.name | WHERE b == \"*/\""))
	fires("scope.esql_source", esql("/* a /* nested /* deep */ */ */ FROM logs-*"))
}

test_esql_parsed_sources_are_used if {
	# A LIKE pattern holds "/*": the text scan cannot tell it from a comment, soclab's parser can.
	q := "FROM logs-endpoint.events.process-default | WHERE process.executable LIKE \"/tmp/*\" | LIMIT 5"
	fires("scope.esql_source", esql(q))
	allowed(object.union(esql(q), {"esql": {"source_command": "from", "sources": ["logs-endpoint.events.process-default"], "limit": 5}}))
	fires("scope.system_index", object.union(esql(q), {"esql": {"source_command": "from", "sources": [".security"], "limit": 5}}))
}

test_esql_lookup_join if {
	allowed(esql("FROM logs-* | LOOKUP JOIN logs-ti_abusech.ip-default ON source.ip | LIMIT 10"))
	fires("scope.index_outside", esql("FROM logs-* | LOOKUP JOIN hr-records ON user.name"))
}

test_esql_enrich_denied if {
	fires("scope.esql_source", esql("FROM logs-* | ENRICH users-policy ON user.name"))
	not fires("scope.esql_source", esql("FROM logs-* | ENRICH ti-policy ON source.ip")) with data.soclab.config as {"allowed_enrich_policies": ["ti-policy"]}
}

test_esql_unparseable_source_denied if {
	fires("scope.esql_source", esql("SELECT * FROM users"))
	fires("scope.esql_source", call("esql_query", {"query": 42}))
}

case_scope := {"scenario": {"scope": {"indices": ["logs-*", "logs-endpoint.events.process-default", "logs-zeek.dns-default", ".alerts-security.alerts-default"]}}}

test_other_namespace_denied if {
	fires("scope.index_outside", object.union(search("logs-*-globex", {}), case_scope))
	fires("scope.index_outside", object.union(esql("FROM logs-endpoint.events.process-acme | LIMIT 5"), case_scope))
}

test_own_namespace_allowed if {
	not fires("scope.index_outside", object.union(search("logs-*-default", {}), case_scope))
	not fires("scope.index_outside", object.union(search("logs-zeek.*", {}), case_scope))
	not fires("scope.index_outside", object.union(esql("FROM logs-endpoint.events.process-default | LIMIT 5"), case_scope))
}

test_namespace_rule_needs_concrete_streams if {
	not fires("scope.index_outside", search("logs-*-globex", {}))
}
