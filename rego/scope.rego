# Queries stay inside the case's telemetry: every index expression a read tool
# names (es_search, get_mappings, list_indices, the FROM and LOOKUP JOIN of ES|QL,
# terms-lookup and more_like_this documents inside a search body) must resolve
# inside scope.indices. Exclusions (-x) only narrow an expression, so only the
# inclusions are checked; an expression made of exclusions alone means "all".
package soclab.guard

import rego.v1

scope_indices := [s | some s in object.get(input, ["scenario", "scope", "indices"], []); is_string(s)]

alerts_stream := ".alerts-security.alerts-*"

# ---- index expressions named by the call --------------------------------------

index_exprs contains e if {
	tool in {"es_search", "get_mappings"}
	e := object.get(args, "index", "")
}

index_exprs contains e if {
	tool == "list_indices"
	e := object.get(args, "pattern", "*")
	not list_names_only(e)
}

# list_indices() and list_indices("*") list the names of ordinary indices, no
# documents (hidden and system indices are not expanded by *): allowed.
list_names_only(e) if {
	config.list_indices_wildcard
	e in {"*", ""}
}

# Documents fetched from another index inside a search body: terms lookup
# {"index", "id", "path"} and more_like_this {"_index", "_id"}.
index_exprs contains e if {
	tool == "es_search"
	walk(object.get(args, "body", {}), [_, node])
	is_object(node)
	some key in {"index", "_index"}
	e := node[key]
	is_string(e)
	some idk in {"id", "_id", "doc"}
	object.get(node, idk, null) != null
}

# indices_boost: an object (old form) or a list of one-key objects.
index_exprs contains e if {
	tool == "es_search"
	boost := object.get(object.get(args, "body", {}), "indices_boost", {})
	is_object(boost)
	some e, _ in boost
}

index_exprs contains e if {
	tool == "es_search"
	boost := object.get(object.get(args, "body", {}), "indices_boost", [])
	is_array(boost)
	some o in boost
	is_object(o)
	some e, _ in o
}

index_exprs contains concat(",", [s | some s in esql_sources]) if {
	tool == "esql_query"
	count(esql_sources) > 0
}

index_exprs contains e if {
	tool == "esql_query"
	some e in esql_lookup_indices
}

# ---- ES|QL ----------------------------------------------------------------------

esql_text := str_arg("query")

# Comments removed (innermost /* */ twice, then // to end of line), for finding
# the source command. Lookups are also searched in the raw text, so hiding one
# behind a comment marker inside a string does not take it out of the check.
esql_clean := regex.replace(
	regex.replace(regex.replace(esql_text, `/\*([^*/]|\*[^/]|/[^*])*\*/`, " "), `/\*([^*/]|\*[^/]|/[^*])*\*/`, " "),
	`//[^\n]*`, " ",
)

esql_source_match := regex.find_all_string_submatch_n(`(?is)^\s*(from|ts|metrics)\s+(.*?)(\s+metadata\s+[^|]*)?(\||$)`, esql_clean, 1)

esql_sources := [trim(trim_space(s), "\"'` ") |
	some s in split(esql_source_match[0][2], ",")
]

esql_lookup_indices := {trim(m[1], "\"'`") |
	some text in {esql_text, esql_clean}
	some m in regex.find_all_string_submatch_n(`(?i)\blookup\s+join\s+("[^"]*"|[^\s|,]+)`, text, -1)
}

deny contains {"id": "scope.esql_source", "reason": sprintf("could not find the source of this ES|QL query (expected FROM, ROW or SHOW first): %q", [substring(esql_text, 0, 120)])} if {
	tool == "esql_query"
	is_string(esql_text)
	not regex.match(`(?is)^\s*(from|ts|metrics|row|show)\b`, esql_clean)
}

deny contains {"id": "scope.esql_source", "reason": "esql_query needs the query as a string"} if {
	tool == "esql_query"
	not is_string(object.get(args, "query", null))
}

deny contains {"id": "scope.esql_source", "reason": "nested /* */ comments too deep to check in this ES|QL query"} if {
	tool == "esql_query"
	contains(esql_clean, "/*")
}

deny contains {"id": "scope.esql_source", "reason": sprintf("ENRICH %s reads an enrich policy's own indices, outside the case telemetry", [m[1]])} if {
	tool == "esql_query"
	some m in regex.find_all_string_submatch_n(`(?i)\|\s*enrich\s+([^\s|]+)`, esql_clean, -1)
	not m[1] in config.allowed_enrich_policies
}

# ---- checking an expression -------------------------------------------------------

index_items(e) := [trim_space(trim(trim_space(i), "\"")) | some i in split(e, ",")]

inclusions(e) := [i | some i in index_items(e); i != ""; not startswith(i, "-")]

# The name part of an item (a ::data / ::failures selector removed).
item_name(i) := split(i, "::")[0]

in_scope(name) if {
	some s in scope_indices
	glob.match(s, null, name)
}

deny contains {"id": "scope.all_indices", "reason": sprintf("%s: index expression %q reaches every index; name the case's data streams instead (%s)", [tool, e, concat(", ", scope_indices)])} if {
	some e in index_exprs
	is_string(e)
	count(inclusions(e)) == 0
}

deny contains {"id": "scope.all_indices", "reason": sprintf("%s: %q reaches every index; name the case's data streams instead (%s)", [tool, i, concat(", ", scope_indices)])} if {
	some e in index_exprs
	is_string(e)
	some i in inclusions(e)
	regex.match(`^(_all|\*+)$`, item_name(i))
}

deny contains {"id": "scope.index_outside", "reason": sprintf("%s: the index expression must be a string, got %v", [tool, e])} if {
	some e in index_exprs
	not is_string(e)
}

deny contains {"id": "scope.remote_cluster", "reason": sprintf("%s: %q names a remote cluster; only the local case telemetry may be queried", [tool, i])} if {
	some e in index_exprs
	is_string(e)
	some i in inclusions(e)
	contains(item_name(i), ":")
}

deny contains {"id": "scope.index_outside", "reason": sprintf("%s: %q selects the %s of a data stream; only its data may be queried", [tool, i, sel])} if {
	some e in index_exprs
	is_string(e)
	some i in inclusions(e)
	parts := split(i, "::")
	count(parts) > 1
	sel := parts[1]
	sel != "data"
}

deny contains {"id": "scope.index_outside", "reason": sprintf("%s: date-math index name %q cannot be checked against the case scope", [tool, i])} if {
	some e in index_exprs
	is_string(e)
	some i in inclusions(e)
	regex.match(`^(<|%3[cC])`, i)
}

deny contains {"id": "scope.system_index", "reason": sprintf("%s: %q is a system or hidden index; the only hidden data the agent may read is the security alerts data stream", [tool, i])} if {
	some e in index_exprs
	is_string(e)
	some i in inclusions(e)
	name := item_name(i)
	startswith(name, ".")
	not hidden_allowed(name)
}

hidden_allowed(name) if {
	glob.match(alerts_stream, null, name)
	in_scope(name)
}

deny contains {"id": "scope.index_outside", "reason": sprintf("%s: %q is outside this case's telemetry (%s)", [tool, i, concat(", ", scope_indices)])} if {
	some e in index_exprs
	is_string(e)
	some i in inclusions(e)
	name := item_name(i)
	not startswith(name, ".")
	not contains(name, ":")
	not regex.match(`^(_all|\*+|<.*|%3[cC].*)$`, name)
	not in_scope(name)
}
