"""pytest-soclab: benchmark SecOps investigation agents on Elasticsearch telemetry."""

from pytest_soclab.errors import EsError, ToolError
from pytest_soclab.models import AgentReport, Findings

__all__ = ["AgentReport", "EsError", "Findings", "ToolError", "__version__"]
__version__ = "0.1.0"
