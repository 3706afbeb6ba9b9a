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
	contains(body_json, "index\":")
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
# (Cheap substring checks guard every regular expression: regex calls dominate the
# cost of a decision, and most queries have no comments, lookups or enrich.)

esql_text := str_arg("query") if tool == "esql_query"

esql_lower := lower(esql_text)

# Comments removed (innermost /* */ twice, then // to end of line), for finding
# the source command. Lookups are also searched in the raw text, so hiding one
# behind a comment marker inside a string does not take it out of the check.
esql_clean := without_line_comments(without_block_comments(esql_text))

without_block_comments(q) := q if {
	not contains(q, "/*")
} else := regex.replace(regex.replace(q, `/\*([^*/]|\*[^/]|/[^*])*\*/`, " "), `/\*([^*/]|\*[^/]|/[^*])*\*/`, " ")

without_line_comments(q) := q if {
	not contains(q, "//")
} else := regex.replace(q, `//[^\n]*`, " ")

# The query's commands, each as its list of words (first word lower-cased): split on
# "|" and whitespace with string functions (a "|" inside a string literal splits
# too, which at worst adds a bogus command: harmless for these checks).
esql_commands := [words |
	some segment in split(esql_clean, "|")
	tokens := [t | some t in split(strings.replace_n({"\n": " ", "\t": " ", "\r": " ", ",": " , "}, segment), " "); t != ""]
	count(tokens) > 0
	words := array.concat([lower(tokens[0])], array.slice(tokens, 1, count(tokens)))
]

esql_source_words := array.slice(esql_commands[0], 1, count(esql_commands[0])) if {
	esql_commands[0][0] in {"from", "ts", "metrics"}
}

# The query's sources: from soclab's parser when it gave them (input.esql, the parse
# that runs the query), else from the text.
esql_parsed if is_array(input.esql.sources)

esql_sources := input.esql.sources if esql_parsed

else := esql_scanned_sources

# FROM a, b METADATA _id: the words before METADATA, joined and split on commas.
esql_scanned_sources := [trim(trim_space(s), "\"'` ") |
	some s in split(concat(" ", [w | some i, w in esql_source_words; i < metadata_at]), ",")
	trim_space(s) != ""
]

metadata_at := min({i | some i, w in esql_source_words; lower(w) == "metadata"} | {count(esql_source_words)})

esql_lookup_indices := {trim(m[1], "\"'`") |
	contains(esql_lower, "lookup")
	some text in {esql_text, esql_clean}
	some m in regex.find_all_string_submatch_n(`(?i)\blookup\s+join\s+("[^"]*"|[^\s|,]+)`, text, -1)
}

esql_has_source if esql_parsed

esql_has_source if esql_commands[0][0] in {"from", "ts", "metrics", "row", "show"}

esql_deny contains {"id": "scope.esql_source", "reason": sprintf("could not find the source of this ES|QL query (expected FROM, ROW or SHOW first): %q", [substring(esql_text, 0, 120)])} if {
	is_string(esql_text)
	not esql_has_source
}

esql_deny contains {"id": "scope.esql_source", "reason": "esql_query needs the query as a string"} if {
	tool == "esql_query"
	not is_string(object.get(args, "query", null))
}

esql_deny contains {"id": "scope.esql_source", "reason": "nested /* */ comments too deep to check in this ES|QL query"} if {
	not esql_parsed
	contains(esql_clean, "/*")
}

esql_deny contains {"id": "scope.esql_source", "reason": sprintf("ENRICH %s reads an enrich policy's own indices, outside the case telemetry", [m[1]])} if {
	contains(esql_lower, "enrich")
	some m in regex.find_all_string_submatch_n(`(?i)\|\s*enrich\s+([^\s|]+)`, esql_clean, -1)
	not m[1] in config.allowed_enrich_policies
}

# ---- checking an expression -------------------------------------------------------

inclusions(e) := [i |
	some raw in split(e, ",")
	i := trim_space(raw)
	i != ""
	not startswith(i, "-")
]

# Each string expression with its inclusions, computed once per decision.
expr_inclusions := {e: inclusions(e) | some e in index_exprs; is_string(e)}

# Every inclusion of every expression, parsed once per decision:
# item (as written), name (a ::selector removed) and selector.
named_items contains {"expr": e, "item": i, "name": parts[0], "selector": selector(parts)} if {
	some e, incl in expr_inclusions
	some i in incl
	parts := split(i, "::")
}

selector(parts) := parts[1] if {
	count(parts) > 1
} else := "data"

in_scope(name) if {
	some s in scope_indices
	glob.match(s, null, name)
}

index_deny contains {"id": "scope.all_indices", "reason": sprintf("%s: index expression %q reaches every index; name the case's data streams instead (%s)", [tool, e, concat(", ", scope_indices)])} if {
	some e, incl in expr_inclusions
	count(incl) == 0
}

all_indices(name) if name == "_all"

all_indices(name) if trim(name, "*") == ""

index_deny contains {"id": "scope.all_indices", "reason": sprintf("%s: %q reaches every index; name the case's data streams instead (%s)", [tool, it.item, concat(", ", scope_indices)])} if {
	some it in named_items
	all_indices(it.name)
}

index_deny contains {"id": "scope.index_outside", "reason": sprintf("%s: the index expression must be a string, got %v", [tool, e])} if {
	some e in index_exprs
	not is_string(e)
}

index_deny contains {"id": "scope.remote_cluster", "reason": sprintf("%s: %q names a remote cluster; only the local case telemetry may be queried", [tool, it.item])} if {
	some it in named_items
	contains(it.name, ":")
}

index_deny contains {"id": "scope.index_outside", "reason": sprintf("%s: %q selects the %s of a data stream; only its data may be queried", [tool, it.item, it.selector])} if {
	some it in named_items
	it.selector != "data"
}

index_deny contains {"id": "scope.index_outside", "reason": sprintf("%s: date-math index name %q cannot be checked against the case scope", [tool, it.item])} if {
	some it in named_items
	date_math(it.name)
}

index_deny contains {"id": "scope.system_index", "reason": sprintf("%s: %q is a system or hidden index; the only hidden data the agent may read is the security alerts data stream", [tool, it.item])} if {
	some it in named_items
	startswith(it.name, ".")
	not hidden_allowed(it.name)
}

hidden_allowed(name) if {
	glob.match(alerts_stream, null, name)
	in_scope(name)
}

date_math(name) if startswith(name, "<")

date_math(name) if startswith(lower(name), "%3c")

index_deny contains {"id": "scope.index_outside", "reason": sprintf("%s: %q is outside this case's telemetry (%s)", [tool, it.item, concat(", ", scope_indices)])} if {
	some it in named_items
	not startswith(it.name, ".")
	not contains(it.name, ":")
	not date_math(it.name)
	not all_indices(it.name)
	not in_scope(it.name)
}

# Data streams are named type-dataset-namespace, and a shared cluster keeps tenants
# (or environments) apart by namespace: logs-*-globex is inside logs-* yet is someone
# else's telemetry. When the case's own streams are named in scope.indices, an
# inclusion that fixes a namespace must use one of theirs.
scope_namespaces := {ns |
	some s in scope_indices
	not contains(s, "*")
	ns := stream_namespace(s)
}

stream_namespace(name) := ns if {
	some t in {"logs-", "metrics-", "traces-", "synthetics-", "profiling-"}
	startswith(name, t)
	parts := split(name, "-")
	count(parts) >= 3
	ns := parts[count(parts) - 1]
	ns != ""
	not contains(ns, "*")
}

index_deny contains {"id": "scope.index_outside", "reason": sprintf("%s: %q names the data-stream namespace %q; this case's telemetry is in namespace %s", [tool, it.item, ns, concat(", ", sort(scope_namespaces))])} if {
	count(scope_namespaces) > 0
	some it in named_items
	ns := stream_namespace(it.name)
	not ns in scope_namespaces
}
