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

# One else-chain by tool: a decision evaluates its own tool's branch only. (Every
# branch's value is a set that is always defined.)
index_exprs := {object.get(args, "index", "")} | body_index_exprs if {
	tool == "es_search"
} else := {object.get(args, "index", "")} if {
	tool == "get_mappings"
} else := list_index_exprs if {
	tool == "list_indices"
} else := esql_index_exprs if {
	tool == "esql_query"
} else := set()

list_index_exprs contains e if {
	e := object.get(args, "pattern", "*")
	not list_names_only(e)
}

# list_indices() and list_indices("*") list the names of ordinary indices, no
# documents (hidden and system indices are not expanded by *): allowed.
list_names_only(e) if {
	item.config.list_indices_wildcard
	e in {"*", ""}
}

# Index expressions inside a search body: from the facts when the input has them
# (input.body_index_exprs, soclab's pytest_soclab.guard.facts reads the same ones out
# of the body), else found here.
body_index_exprs := {e | some e in input.body_index_exprs} if {
	is_array(input.body_index_exprs)
} else := scanned_body_index_exprs

# Documents fetched from another index inside a search body: terms lookup
# {"index", "id", "path"} and more_like_this {"_index", "_id"}.
scanned_body_index_exprs contains e if {
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

scanned_body_index_exprs contains e if {
	boost_possible
	boost := object.get(object.get(args, "body", {}), "indices_boost", {})
	is_object(boost)
	some e, _ in boost
}

scanned_body_index_exprs contains e if {
	boost_possible
	boost := object.get(object.get(args, "body", {}), "indices_boost", [])
	is_array(boost)
	some o in boost
	is_object(o)
	some e, _ in o
}

# (Sources that are all clean names have no rule to answer: see computed_clean_names.)
esql_index_exprs contains concat(",", [s | some s in esql_sources]) if {
	count(esql_sources) > 0
	not esql_sources_clean
}

esql_index_exprs contains e if {
	some e in esql_lookup_indices
}

esql_sources_clean if {
	every s in esql_sources {
		s in item.clean_names
	}
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

# An expression's inclusions as items: the inclusion as written (item), its name (a
# ::selector removed), its selector, and what the rules below test of the name (all
# indices, remote, date math, hidden, the data-stream namespace it fixes, or null).
# Parsing only: the facts in the input (input.index_facts, from soclab's
# pytest_soclab.guard.facts) when the engine gave them for this very expression,
# else scanned here. Both give the same list.
expr_items(e) := input.index_facts[e] if {
	is_array(input.index_facts[e])
} else := scanned_items(e)

scanned_items(e) := [index_item(i) | some i in inclusions(e)]

index_item(i) := {
	"item": i,
	"name": name,
	"selector": selector(parts),
	"all": is_all_indices(name),
	"remote": contains(name, ":"),
	"date_math": is_date_math(name),
	"hidden": startswith(name, "."),
	"namespace": namespace_or_null(name),
} if {
	parts := split(i, "::")
	name := parts[0]
}

# (a value for every name: an undefined argument would leave the whole item undefined)
is_all_indices(name) := true if all_indices(name) else := false

is_date_math(name) := true if date_math(name) else := false

namespace_or_null(name) := ns if {
	ns := stream_namespace(name)
} else := null

# Each string expression with its items, computed once per decision. An expression
# that is one clean name (see computed_clean_names) has itself as its only inclusion,
# and no rule to answer: it is left out.
expr_inclusions := {e: expr_items(e) | some e in index_exprs; is_string(e); not e in item.clean_names}

# Every item of every expression that some rule must look at. (An item that names a
# clean name and selects its data is left out.)
checked_items contains it if {
	some _, items in expr_inclusions
	some it in items
	not clean_item(it)
}

clean_item(it) if {
	it.name in item.clean_names
	it.selector == "data"
}

# Whether index_deny has anything to answer: an expression that is not a string, one
# without inclusions, or an item that is not plainly in scope. (One pass over the items
# here instead of every index_deny rule looking at each: most reads name indices that
# are in scope, and then no index_deny rule is evaluated at all.)
index_to_check if {
	some e in index_exprs
	not is_string(e)
}

index_to_check if {
	some _, items in expr_inclusions
	count(items) == 0
}

index_to_check if {
	some _, items in expr_inclusions
	some it in items
	not item_fine(it)
}

# No index_deny rule fires for such an item: it is left out of checked_items (a clean
# name selecting its data), or it is plainly in scope (each test below is one
# index_deny rule's, negated).
item_fine(it) if {
	it.selector == "data"
	it.name in item.clean_names
}

item_fine(it) if {
	it.selector == "data"
	not it.hidden
	not it.remote
	not it.date_math
	not it.all
	in_scope(it.name)
	namespace_ok(it.namespace)
}

namespace_ok(ns) if not is_string(ns)

namespace_ok(ns) if count(item.scope_namespaces) == 0

namespace_ok(ns) if ns in item.scope_namespaces

selector(parts) := parts[1] if {
	count(parts) > 1
} else := "data"

# A scope entry without glob syntax matches only itself: a native membership test
# replaces its glob.match (the per-item values sort the entries into the two kinds).
in_scope(name) := true if {
	name in item.scope_literals
} else := true if {
	some s in item.scope_globs
	glob.match(s, null, name)
}

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

index_deny contains {"id": "scope.all_indices", "reason": sprintf("%s: %q reaches every index; name the case's data streams instead (%s)", [tool, it.item, concat(", ", scope_indices)])} if {
	some it in checked_items
	it.all
}

index_deny contains {"id": "scope.index_outside", "reason": sprintf("%s: the index expression must be a string, got %v", [tool, e])} if {
	some e in index_exprs
	not is_string(e)
}

index_deny contains {"id": "scope.remote_cluster", "reason": sprintf("%s: %q names a remote cluster; only the local case telemetry may be queried", [tool, it.item])} if {
	some it in checked_items
	it.remote
}

index_deny contains {"id": "scope.index_outside", "reason": sprintf("%s: %q selects the %s of a data stream; only its data may be queried", [tool, it.item, it.selector])} if {
	some it in checked_items
	it.selector != "data"
}

index_deny contains {"id": "scope.index_outside", "reason": sprintf("%s: date-math index name %q cannot be checked against the case scope", [tool, it.item])} if {
	some it in checked_items
	it.date_math
}

index_deny contains {"id": "scope.system_index", "reason": sprintf("%s: %q is a system or hidden index; the only hidden data the agent may read is the security alerts data stream", [tool, it.item])} if {
	some it in checked_items
	it.hidden
	not hidden_allowed(it.name)
}

# (the startswith is what glob.match(alerts_stream, null, name) tests, at a fraction of the cost)
hidden_allowed(name) if {
	startswith(name, ".alerts-security.alerts-")
	in_scope(name)
}

all_indices(name) if name == "_all"

all_indices(name) if trim(name, "*") == ""

date_math(name) if startswith(name, "<")

date_math(name) if startswith(lower(name), "%3c")

index_deny contains {"id": "scope.index_outside", "reason": sprintf("%s: %q is outside this case's telemetry (%s)", [tool, it.item, concat(", ", scope_indices)])} if {
	some it in checked_items
	not in_scope(it.name) # first: most names are in scope
	not it.hidden
	not it.remote
	not it.date_math
	not it.all
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
	ns := it.namespace
	is_string(ns)
	not ns in scope_namespaces
}
