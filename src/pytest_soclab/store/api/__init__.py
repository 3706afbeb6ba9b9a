"""The read API beyond search and ES|QL: documents, counts, multi-search, field capabilities,
cat tables, scroll and point in time, async ES|QL, and the response shaping every answer
gets (filter_path, pretty). http.py routes to these after its own routes."""

from .request import ApiRequest, Route
from .routes import ROUTES
from .search import run_search
from .shaping import filter_path

__all__ = ["ApiRequest", "ROUTES", "Route", "filter_path", "run_search"]
