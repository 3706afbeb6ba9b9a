"""Facts about an ES|QL query for the guard, from soclab's own parser.

Rego sees text; finding the source indices of a query in text means guessing
where strings and comments are (`LIKE "/tmp/*"` looks like a comment opener).
The parser that runs the query knows. When it cannot parse a query, or the
query uses a command it does not model, no facts are given and the policy falls
back to its own (conservative) scan of the text.
"""

from __future__ import annotations

from typing import Any

from pytest_soclab.errors import EsError


def esql_facts(query: Any) -> dict[str, Any] | None:
    if not isinstance(query, str):
        return None
    from pytest_soclab.store.esql import ast as A
    from pytest_soclab.store.esql.parser import parse

    try:
        q = parse(query)
    except EsError:
        return None
    except Exception:  # noqa: BLE001 - no facts; the policy scans the text instead
        return None
    if any(isinstance(c, A.Unsupported) for c in q.commands):
        return None
    src = q.source
    sources = [name for name, _ in src.indices] if isinstance(src, A.From) else []
    limits = [c.n for c in q.commands if isinstance(c, A.Limit) and c.n is not None]
    return {
        "source_command": src.name.lower(),
        "sources": sources,
        "limit": min(limits) if limits else None,
    }
