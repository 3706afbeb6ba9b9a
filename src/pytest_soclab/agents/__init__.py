"""Agents: the contract, adapters onto it, and the reference agents."""

from pytest_soclab.faces import lazy_face

# Imported on first use: see pytest_soclab.faces.
__getattr__, __dir__ = lazy_face(__name__, {
    "Agent": "pytest_soclab.agents.base",
    "AgentContext": "pytest_soclab.agents.kinds",
    "AgentProcessError": "pytest_soclab.agents.command",
    "as_agent": "pytest_soclab.agents.registry",
    "registered_kinds": "pytest_soclab.agents.registry",
    "resolve_agent": "pytest_soclab.agents.registry",
})

__all__ = [
    "Agent",
    "AgentContext",
    "AgentProcessError",
    "as_agent",
    "registered_kinds",
    "resolve_agent",
]
