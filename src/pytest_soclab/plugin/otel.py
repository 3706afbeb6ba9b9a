"""--soclab-otel=PATH: the controller turns each item's result into agent spans, written at the end."""

from __future__ import annotations

import time

import pytest

from pytest_soclab.models import ItemResult
from pytest_soclab.run import OtelTraces


class OtelHooks:
    def __init__(self, traces: OtelTraces):
        self.traces = traces

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        data = getattr(report, "soclab_result", None)
        if isinstance(data, str):
            result = ItemResult.model_validate_json(data)
            if not result.carried:  # a carried item did not run now: no span for it
                self.traces.record(result, float(getattr(report, "stop", None) or time.time()))

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.traces.write()
