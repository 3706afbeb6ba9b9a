# Query cost: bounded result sizes, aggregation sizes, ES|QL LIMITs, time ranges
# relative to the case window, and a budget of calls, rows and denials per item.
package soclab.guard

import rego.v1

# ---- result sizes --------------------------------------------------------------------

search_deny contains {"id": "cost.search_size", "reason": sprintf("es_search size %v is over the limit of %d hits per request; page or aggregate instead", [size, config.max_search_size])} if {
	tool == "es_search"
	size := object.get(body, "size", 10)
	not within(size, item.config.max_search_size)
}

search_deny contains {"id": "cost.search_size", "reason": sprintf("es_search from + size = %v is past the result window of %d", [from + size, config.max_result_window])} if {
	tool == "es_search"
	from := object.get(body, "from", 0)
	size := object.get(body, "size", 10)
	is_number(from)
	is_number(size)
	from + size > item.config.max_result_window
}

# size / shard_size anywhere under aggs (terms, composite, top_hits, significant_terms...):
# from the facts when the input has them (input.agg_sizes: soclab's
# pytest_soclab.guard.facts reads the same keys, value texts and values out of the
# body), else found in the aggregations' JSON text.
search_deny contains {"id": "cost.agg_size", "reason": sprintf("aggregation %s = %s is over the limit of %d buckets", [a.key, a.text, config.max_agg_size])} if {
	tool == "es_search"
	is_array(input.agg_sizes)
	some a in input.agg_sizes
	not within(a.value, item.config.max_agg_size)
}

search_deny contains {"id": "cost.agg_size", "reason": sprintf("aggregation %s = %s is over the limit of %d buckets", [m[2], m[3], config.max_agg_size])} if {
	tool == "es_search"
	not is_array(input.agg_sizes)
	some key in {"aggs", "aggregations"}
	aggs := body[key]
	aggs_json := json.marshal(aggs)
	contains(aggs_json, "size\":") # both keys end so: a cheap test before the regex
	some m in regex.find_all_string_submatch_n(`(^|[^\\])"(size|shard_size)":(-?[0-9.eE+]+|"[^"]*"|true|false|null|\{|\[)`, aggs_json, -1)
	not within(json.unmarshal(m[3]), item.config.max_agg_size)
}

esql_deny contains {"id": "cost.esql_limit", "reason": sprintf("ES|QL LIMIT %v is over the limit of %d rows; aggregate with STATS or page by time instead", [n, config.max_esql_limit])} if {
	some n in esql_limits
	n > item.config.max_esql_limit
}

# The n of every LIMIT n command (the commands as esql_commands splits them; only the
# segments that mention "limit" are split into words).
# From soclab's parser when it parsed the query (a "| LIMIT 5000" inside a string literal is
# no command), else from the text.
esql_limits contains n if {
	esql_parsed
	n := input.esql.limit
	is_number(n)
}

esql_limits contains n if {
	not esql_parsed
	contains(esql_lower, "limit")
	some i, segment in split(lower(esql_clean), "|")
	contains(segment, "limit")
	words := esql_words(esql_segments[i])
	lower(words[0]) == "limit"
	n := to_number(words[1])
}

within(n, limit) if {
	is_number(n)
	n >= 0
	n <= limit
}

# ---- time range width ----------------------------------------------------------------------

scope_range := object.get(input, ["scenario", "scope", "time_range"], {})

scope_window_ns := time.parse_rfc3339_ns(scope_range.lte) - time.parse_rfc3339_ns(scope_range.gte) if {
	is_string(scope_range.gte)
	is_string(scope_range.lte)
}

max_range_ns := item.max_range_ns[0]

computed_max_range_ns := max([computed_config.min_range_ns, computed_config.max_range_factor * scope_window_ns])

# @timestamp ranges in a search body (range queries anywhere under query / post_filter).
# From the facts when the input has them (input.search_ranges: soclab's
# pytest_soclab.guard.facts reads the same ranges out of the body and resolves each
# bound to a number, a distance from "now", null for none, or "unparsed"; it gives
# them only for bodies where it surely reads what the scan below reads). Parsing
# only: what a bound means and how wide a range may be is decided here.
time_ranges contains {"lo": lo, "hi": hi} if {
	tool == "es_search"
	is_array(input.search_ranges)
	some r in input.search_ranges
	lo := fact_bound_ns(r.lo, "lo")
	hi := fact_bound_ns(r.hi, "hi")
}

fact_bound_ns(b, side) := b if {
	is_number(b)
} else := bound_ns(null, side) if {
	b == null
} else := scope_hi - b.now_minus_ns if {
	is_number(b.now_minus_ns) # "now" is the case window's end, as in bound_ns
}

# Without facts: found in the body's JSON text, {"range":{"@timestamp":{...}}} (keys
# are sorted). String functions, not regular expressions: they cost a fraction as much.
time_ranges contains {"lo": lo, "hi": hi} if {
	tool == "es_search"
	not is_array(input.search_ranges)
	contains(body_json, "\"range\":{\"@timestamp\":{")
	some i, part in split(body_json, "\"range\":{\"@timestamp\":{")
	i > 0
	bounds := {k: v |
		some kv in split(split(part, "}")[0], ",")
		colon := indexof(kv, ":")
		colon > 0
		k := trim(substring(kv, 0, colon), "\"")
		v := json.unmarshal(substring(kv, colon + 1, -1))
	}
	lo := bound_ns(object.get(bounds, "gte", object.get(bounds, "gt", null)), "lo")
	hi := bound_ns(object.get(bounds, "lte", object.get(bounds, "lt", null)), "hi")
}

# ES|QL: @timestamp compared with literal timestamps or NOW() - <n> <unit>. From the
# facts when given (input.esql_bounds: soclab's pytest_soclab.guard.facts reads the
# same comparisons out of the text and resolves each bound as for a search), else
# found in the text.
time_ranges contains {"lo": lo, "hi": hi} if {
	tool == "esql_query"
	is_object(input.esql_bounds)
	los := [t | some b in input.esql_bounds.lo; t := fact_bound_ns(b, "lo")]
	his := [t | some b in input.esql_bounds.hi; t := fact_bound_ns(b, "hi")]
	count(los) > 0
	lo := max(los)
	hi := upper_bound(his)
}

time_ranges contains {"lo": lo, "hi": hi} if {
	tool == "esql_query"
	not is_object(input.esql_bounds)
	contains(esql_lower, "@timestamp")
	esql_compares # the pattern needs a < or >: a cheap test before the regex
	cmps := regex.find_all_string_submatch_n(`(?i)@timestamp\s*(>=|>|<=|<)\s*(?:to_datetime\s*\(\s*)?(?:"([^"]+)"|now\s*\(\s*\)\s*-\s*([0-9]+)\s*([a-z]+))`, esql_clean, -1)
	los := [t | some m in cmps; startswith(m[1], ">"); t := esql_bound(m, "lo")]
	his := [t | some m in cmps; startswith(m[1], "<"); t := esql_bound(m, "hi")]
	count(los) > 0
	lo := max(los)
	hi := upper_bound(his)
}

esql_compares if contains(esql_clean, ">")

esql_compares if contains(esql_clean, "<")

esql_bound(m, side) := bound_ns(m[2], side) if m[2] != ""

esql_bound(m, _) := now_minus(to_number(m[3]), m[4]) if m[3] != ""

upper_bound(his) := min(his) if {
	count(his) > 0
} else := scope_hi

# Range bounds the policy understands: RFC 3339 timestamps, dates, epoch millis and
# now-relative date math. Anything else is left out, and the open side then
# defaults to the case window's edge.
# A bound as epoch nanoseconds; a missing bound is the case window's edge.
# One else-chain, cheapest tests first: only the branch that applies does any work.
# RFC 3339 (2026-03-02T01:00:00Z, 2026-03-02T01:00:00.123+01:00) is recognised by its
# shape rather than by a regular expression, and before dates (the two cannot
# overlap: a date has 10 characters). A value of that shape that still does not
# parse is an evaluation error: the guard then fails closed and denies.
bound_ns(v, side) := scope_lo if {
	v == null
	side == "lo"
} else := scope_hi if {
	v == null
} else := v * 1000000 if { # epoch_millis
	is_number(v)
} else := time.parse_rfc3339_ns(v) if {
	is_string(v)
	count(v) >= 20
	substring(v, 10, 1) == "T"
	substring(v, 4, 1) == "-"
} else := time.parse_rfc3339_ns(concat("", [v, "T00:00:00Z"])) if {
	is_string(v)
	count(v) == 10
	regex.match(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`, v)
} else := scope_hi if {
	# now, now/d: the case window's end, so that ranges are measured against the
	# case whatever the wall clock says
	is_string(v)
	regex.match(`^now(/[a-zA-Z])?$`, v)
} else := scope_hi - n * unit_ns(m[2]) if {
	is_string(v)
	startswith(v, "now")
	m := regex.find_all_string_submatch_n(`^now\s*-\s*([0-9]+)([smhdwMy])(/[a-zA-Z])?$`, v, 1)[0]
	n := to_number(m[1])
}

now_minus(n, unit) := scope_hi - n * unit_ns(esql_unit(lower(unit)))

esql_unit(u) := "s" if {
	regex.match(`^(s|sec|secs|second|seconds)$`, u)
} else := "m" if {
	regex.match(`^(min|mins|minute|minutes)$`, u)
} else := "h" if {
	regex.match(`^(h|hour|hours)$`, u)
} else := "d" if {
	regex.match(`^(d|day|days)$`, u)
} else := "w" if {
	regex.match(`^(w|week|weeks)$`, u)
} else := "M" if {
	regex.match(`^(mo|month|months)$`, u)
} else := "y" if {
	regex.match(`^(y|yr|year|years)$`, u)
}

unit_ns(u) := {
	"s": 1000000000, "m": 60000000000, "h": 3600000000000, "d": 86400000000000,
	"w": 604800000000000, "M": 2592000000000000, "y": 31536000000000000,
}[u]

scope_lo := item.scope_lo[0]

computed_scope_lo := time.parse_rfc3339_ns(scope_range.gte) if is_string(scope_range.gte)

scope_hi := item.scope_hi[0]

computed_scope_hi := time.parse_rfc3339_ns(scope_range.lte) if is_string(scope_range.lte)

range_deny contains {"id": "cost.time_range", "reason": sprintf("%s time range spans %s, more than %s (%v x the case window); narrow it to the incident", [tool, human_ns(r.hi - r.lo), human_ns(max_range_ns), config.max_range_factor])} if {
	some r in time_ranges
	r.hi - r.lo > item.max_range_ns[0]
}

human_ns(ns) := sprintf("%.1f days", [ns / 86400000000000])

# ---- budgets from the item's history -----------------------------------------------------------

history := object.get(input, "history", {})

computed_call_budget := n if {
	n := object.get(input, ["scenario", "max_tool_calls"], null)
	is_number(n)
} else := computed_config.max_calls

budget_deny contains {"id": "cost.call_budget", "reason": sprintf("this would be tool call %d; the budget is %d calls per investigation", [calls + 1, item.call_budget])} if {
	tool != "submit_report"
	calls := object.get(history, "calls", 0)
	calls >= item.call_budget
}

budget_deny contains {"id": "cost.row_budget", "reason": sprintf("%d rows already returned; the budget is %d per investigation", [rows, config.max_rows])} if {
	kind == "read"
	rows := object.get(history, "rows_returned", 0)
	rows >= item.config.max_rows
}

budget_deny contains {"id": "cost.denial_budget", "reason": sprintf("%d calls were already denied; the agent is refused further tool calls", [n])} if {
	tool != "submit_report"
	n := object.get(history, "denied", 0)
	n >= item.config.max_denied
}
