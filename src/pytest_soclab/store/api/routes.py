"""The read API's routes beyond http.py's own: path pattern, methods, handler."""

from __future__ import annotations

import re

from . import cat, docs, esql_async, fieldcaps, msearch, search, sql
from .request import Route

_IDX = r"(?P<index>[^/_][^/]*|_all)"


def _r(pattern: str) -> re.Pattern[str]:
    return re.compile("^" + pattern + "/?$")


ROUTES: list[Route] = [
    (_r(r"/_count"), ("GET", "POST"), docs.count),
    (_r(rf"/{_IDX}/_count"), ("GET", "POST"), docs.count),
    (_r(rf"/{_IDX}/_doc/(?P<id>[^/]+)"), ("GET", "HEAD"), docs.get_doc),
    (_r(rf"/{_IDX}/_source/(?P<id>[^/]+)"), ("GET", "HEAD"), docs.get_source),
    (_r(r"/_mget"), ("GET", "POST"), docs.mget),
    (_r(rf"/{_IDX}/_mget"), ("GET", "POST"), docs.mget),
    (_r(r"/_msearch"), ("GET", "POST"), msearch.msearch),
    (_r(rf"/{_IDX}/_msearch"), ("GET", "POST"), msearch.msearch),
    (_r(r"/_field_caps"), ("GET", "POST"), fieldcaps.field_caps),
    (_r(rf"/{_IDX}/_field_caps"), ("GET", "POST"), fieldcaps.field_caps),
    (_r(r"/_cat/shards(?:/(?P<index>[^/]+))?"), ("GET",), cat.cat_shards),
    (_r(r"/_cat/count(?:/(?P<index>[^/]+))?"), ("GET", "POST"), cat.cat_count),
    (_r(r"/_cat/aliases(?:/(?P<index>[^/]+))?"), ("GET",), cat.cat_aliases),
    (_r(r"/_search/scroll(?:/(?P<scroll_id>[^/]+))?"), ("GET", "POST"), search.scroll),
    (_r(r"/_search/scroll(?:/(?P<scroll_id>[^/]+))?"), ("DELETE",), search.clear_scroll),
    (_r(rf"/{_IDX}/_pit"), ("POST",), search.open_pit),
    (_r(r"/_pit"), ("DELETE",), search.close_pit),
    (_r(r"/_query/async"), ("POST",), esql_async.submit),
    (_r(r"/_query/async/(?P<id>[^/]+)"), ("GET",), esql_async.get),
    (_r(r"/_query/async/(?P<id>[^/]+)"), ("DELETE",), esql_async.delete),
    (_r(r"/_sql"), ("GET", "POST"), sql.sql),
    (_r(r"/_sql/close"), ("POST",), sql.close),
    (_r(r"/_sql/translate"), ("GET", "POST"), sql.translate),
]
