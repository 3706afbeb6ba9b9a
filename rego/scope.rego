# Queries stay inside the case's telemetry: every index expression a read tool
# names (es_search, get_mappings, list_indices, the FROM and LOOKUP JOIN of ES|QL,
# terms-lookup and more_like_this documents inside a search body) must resolve
# inside scope.indices. Exclusions (-x) only narrow an expression, so only the
# inclusions are checked; an expression made of exclusions alone means "all".
package soclab.guard

import rego.v1

scope_indices := item.scope_indices

computed_scope_indices := [s | some s in object.get(input, ["scenario", "scope", "indices"], []); is_string(s)]

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

# indices_boost: an object (old form) or a list of one-key objects. (Looked up only
# when the body names it, or is no object: then object.get fails as it should.)
boost_possible if not is_object(body)

boost_possible if contains(body_json, "\"indices_boost\":")

index_exprs contains e if {
	tool == "es_search"
	boost_possible
	boost := object.get(object.get(args, "body", {}), "indices_boost", {})
	is_object(boost)
	some e, _ in boost
}

index_exprs contains e if {
	tool == "es_search"
	boost_possible
	boost := object.get(object.get(args, "body", {}), "indices_boost", [])
	is_array(boost)
	some o in boost
	is_object(o)
	some e, _ in o
}

# (Sources that are all clean names have no rule to answer: see computed_clean_names.)
index_exprs contains concat(",", [s | some s in esql_sources]) if {
	tool == "esql_query"
	count(esql_sources) > 0
	not esql_sources_clean
}

esql_sources_clean if {
	every s in esql_sources {
		s in item.clean_names
	}
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

# The query's commands, split on "|" (a "|" inside a string literal splits too, which
# at worst adds a bogus command: harmless for these checks), and a command's words:
# split on whitespace with string functions, a comma being a word of its own.
esql_segments := split(esql_clean, "|")

esql_spaced(segment) := strings.replace_n({"\n": " ", "\t": " ", "\r": " ", ",": " , "}, segment)

esql_words(segment) := [t | some t in split(esql_spaced(segment), " "); t != ""]

# The first command that has a word (only this one is split into words).
esql_first_command := esql_words(esql_segments[i]) if {
	i := min({j | some j, segment in esql_segments; trim(esql_spaced(segment), " ") != ""})
}

esql_source_words := array.slice(esql_first_command, 1, count(esql_first_command)) if {
	lower(esql_first_command[0]) in {"from", "ts", "metrics"}
}

# The query's sources: from soclab's parser when it gave them (input.esql, the parse
# that runs the query), else from the text.
esql_parsed if is_array(input.esql.sources)

esql_sources := input.esql.sources if is_array(input.esql.sources)

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

esql_has_source := true if {
	esql_parsed
} else := true if {
	lower(esql_first_command[0]) in {"from", "ts", "metrics", "row", "show"}
}

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

# Each string expression with its inclusions, computed once per decision. An
# expression that is one clean name (see computed_clean_names) has itself as its only
# inclusion, and no rule to answer: it is left out.
expr_inclusions := {e: inclusions(e) | some e in index_exprs; is_string(e); not e in item.clean_names}

# Every inclusion of every expression that some rule must look at, parsed once per
# decision: item (as written), name (a ::selector removed) and selector. (An
# inclusion that names a clean name and selects its data is left out.)
checked_items contains {"expr": e, "item": i, "name": parts[0], "selector": selector(parts)} if {
	some e, incl in expr_inclusions
	some i in incl
	parts := split(i, "::")
	not clean_parts(parts)
}

clean_parts(parts) if {
	parts[0] in item.clean_names
	selector(parts) == "data"
}

# Whether index_deny has anything to look at: an expression that is not a string, or
# one that is not a clean name.
index_to_check if count(expr_inclusions) > 0

index_to_check if {
	some e in index_exprs
	not is_string(e)
}

selector(parts) := parts[1] if {
	count(parts) > 1
} else := "data"

# A scope entry without glob syntax matches only itself: a native membership test
# replaces its glob.match (the per-item values sort the entries into the two kinds).
in_scope(name) := true if {
	name in scope_literals
} else := true if {
	some s in scope_globs
	glob.match(s, null, name)
}

scope_literals := item.scope_literals

scope_globs := item.scope_globs

computed_scope_literals := {s | some s in computed_scope_indices; not glob_syntax(s)}

computed_scope_globs := [s | some s in computed_scope_indices; glob_syntax(s)]

glob_syntax(s) if regex.match(`[*?\[\]{}\\!]`, s)

# Names that name no rule: scope entries without glob syntax that are not hidden
# (other than the alerts stream), remote, date math, "everything" or in another
# namespace. An inclusion naming one of them (selecting its data) needs no further
# check.
computed_clean_names := {n |
	some n in computed_scope_literals
	simple_name(n)
	not name_flagged(n)
}

# A name that, taken as an expression, is its own only inclusion and selects data.
simple_name(n) if {
	n != ""
	trim_space(n) == n
	not contains(n, ",")
	not contains(n, "::")
	not startswith(n, "-")
}

name_flagged(n) if all_indices(n)

name_flagged(n) if contains(n, ":")

name_flagged(n) if date_math(n)

name_flagged(n) if {
	startswith(n, ".")
	not computed_hidden_allowed(n)
}

name_flagged(n) if {
	count(computed_scope_namespaces) > 0
	ns := stream_namespace(n)
	not ns in computed_scope_namespaces
}

# hidden_allowed, from the computed scope (this feeds the per-item values)
computed_hidden_allowed(name) if {
	startswith(name, ".alerts-security.alerts-")
	some s in computed_scope_indices
	glob.match(s, null, name)
}

index_deny contains {"id": "scope.all_indices", "reason": sprintf("%s: index expression %q reaches every index; name the case's data streams instead (%s)", [tool, e, concat(", ", scope_indices)])} if {
	some e, incl in expr_inclusions
	count(incl) == 0
}

all_indices(name) if name == "_all"

all_indices(name) if trim(name, "*") == ""

index_deny contains {"id": "scope.all_indices", "reason": sprintf("%s: %q reaches every index; name the case's data streams instead (%s)", [tool, it.item, concat(", ", scope_indices)])} if {
	some it in checked_items
	all_indices(it.name)
}

index_deny contains {"id": "scope.index_outside", "reason": sprintf("%s: the index expression must be a string, got %v", [tool, e])} if {
	some e in index_exprs
	not is_string(e)
}

index_deny contains {"id": "scope.remote_cluster", "reason": sprintf("%s: %q names a remote cluster; only the local case telemetry may be queried", [tool, it.item])} if {
	some it in checked_items
	contains(it.name, ":")
}

index_deny contains {"id": "scope.index_outside", "reason": sprintf("%s: %q selects the %s of a data stream; only its data may be queried", [tool, it.item, it.selector])} if {
	some it in checked_items
	it.selector != "data"
}

index_deny contains {"id": "scope.index_outside", "reason": sprintf("%s: date-math index name %q cannot be checked against the case scope", [tool, it.item])} if {
	some it in checked_items
	date_math(it.name)
}

index_deny contains {"id": "scope.system_index", "reason": sprintf("%s: %q is a system or hidden index; the only hidden data the agent may read is the security alerts data stream", [tool, it.item])} if {
	some it in checked_items
	startswith(it.name, ".")
	not hidden_allowed(it.name)
}

# (the startswith is what glob.match(alerts_stream, null, name) tests, at a fraction of the cost)
hidden_allowed(name) if {
	startswith(name, ".alerts-security.alerts-")
	in_scope(name)
}

date_math(name) if startswith(name, "<")

date_math(name) if startswith(lower(name), "%3c")

index_deny contains {"id": "scope.index_outside", "reason": sprintf("%s: %q is outside this case's telemetry (%s)", [tool, it.item, concat(", ", scope_indices)])} if {
	some it in checked_items
	not in_scope(it.name) # first: most names are in scope
	not startswith(it.name, ".")
	not contains(it.name, ":")
	not date_math(it.name)
	not all_indices(it.name)
}

# Data streams are named type-dataset-namespace, and a shared cluster keeps tenants
# (or environments) apart by namespace: logs-*-globex is inside logs-* yet is someone
# else's telemetry. When the case's own streams are named in scope.indices, an
# inclusion that fixes a namespace must use one of theirs.
scope_namespaces := item.scope_namespaces

computed_scope_namespaces := {ns |
	some s in computed_scope_indices
	not contains(s, "*")
	ns := stream_namespace(s)
}

# (type-...: the first of the dash-separated parts, when there are at least three)
stream_namespace(name) := ns if {
	parts := split(name, "-")
	parts[0] in {"logs", "metrics", "traces", "synthetics", "profiling"}
	count(parts) >= 3
	ns := parts[count(parts) - 1]
	ns != ""
	not contains(ns, "*")
}

index_deny contains {"id": "scope.index_outside", "reason": sprintf("%s: %q names the data-stream namespace %q; this case's telemetry is in namespace %s", [tool, it.item, ns, concat(", ", sort(scope_namespaces))])} if {
	count(scope_namespaces) > 0
	some it in checked_items
	ns := stream_namespace(it.name)
	not ns in scope_namespaces
}
