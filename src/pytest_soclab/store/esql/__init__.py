"""ES|QL over the embedded store: lark grammar, verifier and translation to DuckDB SQL."""

from . import ast
from .parser import parse
from .run import run

__all__ = ["ast", "parse", "run"]
