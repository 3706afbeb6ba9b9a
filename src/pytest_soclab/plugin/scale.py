"""The run-at-scale features, registered at configure time: provider limits, concurrency, traces, resume."""

from __future__ import annotations

import pytest

from pytest_soclab.llm import ProviderLimit, configure_limits
from pytest_soclab.models import Suite
from pytest_soclab.plugin import concurrency, preflight
from pytest_soclab.plugin.otel import OtelHooks
from pytest_soclab.plugin.resume import Resume
from pytest_soclab.plugin.settings import Settings
from pytest_soclab.run import OtelTraces


def install(config: pytest.Config, settings: Settings, suite: Suite) -> None:
    configure_limits({p: ProviderLimit(lim.connections, lim.requests_per_minute) for p, lim in suite.limits.items()})
    if settings.concurrency > 1:
        # a fresh agent and judge per pool thread: model adapters keep per-run state (usage)
        concurrency.install(config, settings.concurrency, lambda: preflight.make_agent(config, settings),
                            lambda: preflight.make_judge(settings))  # fmt: skip
    if settings.otel_path is not None and not hasattr(config, "workerinput"):  # spans are made on the controller
        config.pluginmanager.register(OtelHooks(OtelTraces(settings.otel_path)), "soclab-otel")
    if settings.resume_path is not None:
        config.pluginmanager.register(Resume(config, settings.resume_path), "soclab-resume")
