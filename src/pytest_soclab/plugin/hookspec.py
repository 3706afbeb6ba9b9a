"""soclab's own hooks. Implement them in a conftest.py or a plugin; no patching needed.

Example (conftest.py)::

    def pytest_soclab_oracle_predicates(config):
        def no_ssh_to_dc(ctx, args):
            hits = [c for c in ctx.executed() if c.tool == "execute" and "dc-01" in c.args.get("host", "")]
            return not hits, "no command run on dc-01", f"{len(hits)} commands"
        return {"no_ssh_to_dc": no_ssh_to_dc}

    @pytest.hookspec(firstresult=True)
def pytest_soclab_make_agent(config, spec):
        if spec == "mine":
            from my_agent import investigate
            return investigate

    def pytest_soclab_scorecard(config, results):
        print("level:", results["modes"]["protected"]["level"]["id"])
"""

from __future__ import annotations

from typing import Any

import pytest



def pytest_soclab_oracle_predicates(config: pytest.Config) -> dict[str, Any] | None:
    """Return extra oracle predicates: {name: callable or pytest_soclab.run.oracles.Predicate}.

    A callable is called as `fn(ctx, args)` with an `OracleContext` (report, calls,
    final estate, mode...) and the oracle's arguments from the scenario file, and
    returns a bool or `(passed, expected, actual)`. Results of all implementations
    are merged; a name may not shadow a built-in predicate.
    """


@pytest.hookspec(firstresult=True)
def pytest_soclab_make_agent(config: pytest.Config, spec: str) -> Any:
    """Provide the agent for `--soclab-agent=spec`: return a callable
    `investigate(trigger, tools)` (or a `pytest_soclab.agents.Agent`), or None
    to let other implementations and the built-in agents answer. First result wins."""


def pytest_soclab_item_result(item: pytest.Item, result: Any) -> None:
    """Called on the worker after an item ran, with its `ItemResult` (before it is sent to the controller)."""


def pytest_soclab_scorecard(config: pytest.Config, results: dict[str, Any]) -> None:
    """Called once on the controller when the run's scorecard is final: `results` is the
    content of the results file (see docs/results-schema.md)."""
