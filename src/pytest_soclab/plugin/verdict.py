"""The gate verdict as the run's very last line, after pytest's own "N passed" line.

pytest writes its final statistics line at the end of the terminal reporter's
`pytest_sessionfinish` wrapper; an outer (tryfirst) wrapper is the one place that runs after it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pytest_soclab.plugin.aggregate import Aggregator


class VerdictLine:
    def __init__(self, agg: Aggregator):
        self.agg = agg

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> Iterator[None]:
        result = yield
        tr = session.config.pluginmanager.get_plugin("terminalreporter")
        if tr is not None and self.agg.verdict is not None:
            ok, line = self.agg.verdict
            tr.write_sep("=", line, green=ok, red=not ok, bold=True)
        return result
