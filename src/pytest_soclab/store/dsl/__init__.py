"""Query DSL over the embedded store: queries to SQL, aggregations, search responses."""

from .build import Compiled, Ctx
from .lucene_regex import to_re2
from .query import compile_query
from .search import search

__all__ = ["Compiled", "Ctx", "compile_query", "search", "to_re2"]
