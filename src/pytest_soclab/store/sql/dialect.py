"""The sqlglot dialect ES SQL is read with: MATCH is ES SQL's full-text function, not MySQL's
MATCH ... AGAINST, and index names may carry `-`, `*` and dots unquoted."""

from __future__ import annotations

import re

from sqlglot import parser
from sqlglot.dialects.dialect import Dialect


class EsSql(Dialect):
    class Parser(parser.Parser):
        FUNCTION_PARSERS = {k: v for k, v in parser.Parser.FUNCTION_PARSERS.items() if k != "MATCH"}


# FROM logs-endpoint.events.process-default, FROM logs-*: quoted before parsing
_FROM = re.compile(r'(\bFROM\s+)(?!["(`])([^\s,;()]+)', re.IGNORECASE)


def quote_tables(sql: str) -> str:
    return _FROM.sub(lambda m: f'{m.group(1)}"{m.group(2)}"', sql)
