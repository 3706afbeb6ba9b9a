"""The store's limits, checked before any work starts, each answered as a 400 in Elasticsearch's
error shape that names the limit (docs/store.md lists them with their Elasticsearch counterparts).

Where Elasticsearch has the same limit the name and message follow it; where soclab's bound is
tighter (DuckDB plans deep expression trees in super-linear time), the message says so.
"""

from __future__ import annotations

from pytest_soclab.errors import EsError

# ES|QL (Elasticsearch: 400 expression levels, 500 query levels; soclab is stricter)
ESQL_MAX_EXPRESSION_DEPTH = 48
ESQL_MAX_QUERY_DEPTH = 50  # processing commands after the source command
ESQL_MAX_EXPRESSION_NODES = 10_000
ESQL_MAX_INTEGER_DIGITS = 40  # beyond 20 digits Elasticsearch reads a double; 40 leaves room for that
REPEAT_MAX_BYTES = 1024 * 1024  # one REPEAT result (Elasticsearch's breaker: 1 MB per value)

# Query DSL (Elasticsearch: indices.query.bool.max_clause_count 4096 or more, indices.query.bool.max_nested_depth 30,
# search.max_buckets 65536, index.max_regex_length 1000, index.max_result_window 10000)
MAX_CLAUSE_COUNT = 1024  # soclab stricter: DuckDB plans thousands of OR-ed predicates slowly
MAX_NESTED_DEPTH = 30
MAX_BUCKETS = 65_536
MAX_FILTERS = 1024  # filters of one `filters` aggregation (soclab: each is one SQL predicate)
MAX_REGEX_LENGTH = 1000
MAX_JSON_DEPTH = 200  # nesting of any request body (Elasticsearch's parser: 1000; soclab stricter)

# HTTP (Elasticsearch: http.max_content_length 100mb; soclab serves queries, not bulk loads)
MAX_CONTENT_LENGTH = 20 * 1024 * 1024

# DuckDB's memory_limit on every opened store (its default is 80 % of the machine's RAM, which
# one runaway query of an agent could take from a shared CI machine)
STORE_MEMORY_LIMIT = "2GB"


def out_of_memory(exc: Exception) -> EsError:
    """Elasticsearch's parent circuit breaker (429) for a query that hit the store's memory limit."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return EsError(
        429, "circuit_breaking_exception",
        f"[parent] Data too large: the query needs more than the store's memory limit ({first})",
        durability="TRANSIENT",
    )  # fmt: skip


def too_deep_esql(kind: str, limit: int) -> EsError:
    return EsError(400, "parsing_exception", f"ESQL statement exceeded the maximum {kind} depth allowed ({limit})")


def too_many_clauses(count: int) -> EsError:
    return EsError(
        400, "search_phase_execution_exception",
        f"too_many_nested_clauses: Query contains too many nested clauses; maxClauseCount is set to {MAX_CLAUSE_COUNT} "
        f"(found {count}) [indices.query.bool.max_clause_count]",
    )  # fmt: skip


def too_many_buckets(count: int) -> EsError:
    return EsError(
        400, "too_many_buckets_exception",
        f"Trying to create too many buckets. Must be less than or equal to: [{MAX_BUCKETS}] but was [{count}]. "
        "This limit can be set by changing the [search.max_buckets] cluster level setting.",
        max_buckets=MAX_BUCKETS,
    )  # fmt: skip


def json_depth(value: object, limit: int = MAX_JSON_DEPTH) -> int:
    """The nesting depth of a parsed JSON value, walked without recursion; stops past `limit`."""
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                return deepest
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)
    return deepest
