"""ES|QL tests per command and function family: `esql(query)` answers (columns, rows) and
`esql_error(query)` the error, over the store tests' fixed data set."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from pytest_soclab.errors import EsError
from pytest_soclab.store.embedded import EmbeddedBackend

Result = tuple[list[tuple[str, str]], list[list[Any]]]


@pytest.fixture()
def esql(backend: EmbeddedBackend) -> Callable[[str], Result]:
    def run(query: str) -> Result:
        res = backend.esql_query(query)
        return [(c["name"], c["type"]) for c in res["columns"]], res["values"]

    return run


@pytest.fixture()
def esql_warnings(backend: EmbeddedBackend) -> Callable[[str], list[str]]:
    return lambda query: backend.esql_query(query).get("warnings", [])


@pytest.fixture()
def esql_error(backend: EmbeddedBackend) -> Callable[[str], EsError]:
    def run(query: str) -> EsError:
        with pytest.raises(EsError) as err:
            backend.esql_query(query)
        assert 400 <= err.value.status < 500, err.value  # never an internal error
        return err.value

    return run
