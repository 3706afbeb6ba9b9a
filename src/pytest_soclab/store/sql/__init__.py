"""Elasticsearch SQL (`POST /_sql`) over any backend: parsed by sqlglot, translated to ES|QL,
answered in ES SQL's shapes (json, txt, csv, tsv) with cursors."""

from .run import render, sql_query
from .translate import translate

__all__ = ["render", "sql_query", "translate"]
