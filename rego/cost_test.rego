package soclab.guard_test

import rego.v1

test_search_size if {
	allowed(search("logs-*", {"size": 1000}))
	fires("cost.search_size", search("logs-*", {"size": 5000}))
	fires("cost.search_size", search("logs-*", {"size": -1}))
	fires("cost.search_size", search("logs-*", {"size": "100"}))
	fires("cost.search_size", search("logs-*", {"from": 9500, "size": 1000}))
}

test_agg_size if {
	allowed(search("logs-*", {"size": 0, "aggs": {"hosts": {"terms": {"field": "host.name", "size": 50}}}}))
	fires("cost.agg_size", search("logs-*", {"aggs": {"h": {"terms": {"field": "host.name", "size": 65000}}}}))
	fires("cost.agg_size", search("logs-*", {"aggregations": {"h": {"terms": {"field": "host.name"}, "aggs": {"top": {"top_hits": {"size": 5000}}}}}}))
	fires("cost.agg_size", search("logs-*", {"aggs": {"c": {"composite": {"size": 10000, "sources": []}}}}))
}

test_esql_limit if {
	allowed(esql("FROM logs-* | LIMIT 1000"))
	allowed(esql("FROM logs-* | STATS c = COUNT(*) BY host.name"))
	fires("cost.esql_limit", esql("FROM logs-* | LIMIT 10000"))
	fires("cost.esql_limit", esql("FROM logs-* | SORT @timestamp | limit 100 | LIMIT 50000"))
}

test_time_range_search if {
	ok := {"query": {"range": {"@timestamp": {"gte": "2026-03-02T06:00:00Z", "lte": "2026-03-02T18:00:00Z"}}}}
	allowed(search("logs-*", ok))
	wide := {"query": {"bool": {"filter": [{"range": {"@timestamp": {"gte": "2025-01-01T00:00:00Z", "lte": "2026-03-04T00:00:00Z"}}}]}}}
	fires("cost.time_range", search("logs-*", wide))
	open_lo := {"query": {"range": {"@timestamp": {"gte": "2025-03-02"}}}}
	fires("cost.time_range", search("logs-*", open_lo))
	relative := {"query": {"range": {"@timestamp": {"gte": "now-30d/d", "lt": "now"}}}}
	fires("cost.time_range", search("logs-*", relative))
	relative_ok := {"query": {"range": {"@timestamp": {"gte": "now-2d"}}}}
	allowed(search("logs-*", relative_ok))
	millis := {"query": {"range": {"@timestamp": {"gte": 1772409600000, "lte": 1772582400000}}}}
	allowed(search("logs-*", millis))
}

test_time_range_esql if {
	allowed(esql("FROM logs-* | WHERE @timestamp >= \"2026-03-02T00:00:00Z\" AND @timestamp < \"2026-03-03T00:00:00Z\""))
	fires("cost.time_range", esql("FROM logs-* | WHERE @timestamp >= \"2024-01-01T00:00:00Z\""))
	fires("cost.time_range", esql("FROM logs-* | WHERE @timestamp > NOW() - 90 days"))
	allowed(esql("FROM logs-* | WHERE @timestamp > NOW() - 1 day"))
}

test_call_budget if {
	fires("cost.call_budget", object.union(search("logs-*", {}), {"history": {"calls": 200}}))
	fires("cost.call_budget", object.union(search("logs-*", {}), {"history": {"calls": 20}, "scenario": {"max_tool_calls": 20}}))
	not fires("cost.call_budget", object.union(search("logs-*", {}), {"history": {"calls": 19}, "scenario": {"max_tool_calls": 20}}))
	allowed(object.union(call("submit_report", {"markdown": "done"}), {"history": {"calls": 500}}))
}

test_row_budget if {
	fires("cost.row_budget", object.union(search("logs-*", {}), {"history": {"rows_returned": 200000}}))
	not fires("cost.row_budget", object.union(call("isolate_host", {"host": "web-01"}), {"history": {"rows_returned": 200000}}))
}

test_denial_budget if {
	fires("cost.denial_budget", object.union(search("logs-*", {}), {"history": {"denied": 30}}))
	allowed(object.union(search("logs-*", {}), {"history": {"denied": 29}}))
}

test_esql_limit_from_parsed_facts if {
	q := "FROM logs-* | WHERE process.command_line == \"x | LIMIT 5000\" | LIMIT 10"
	not fires("cost.esql_limit", object.union(esql(q), {"esql": {"source_command": "from", "sources": ["logs-*"], "limit": 10}}))
	fires("cost.esql_limit", object.union(esql("FROM logs-* | LIMIT 5000"), {"esql": {"source_command": "from", "sources": ["logs-*"], "limit": 5000}}))
}
