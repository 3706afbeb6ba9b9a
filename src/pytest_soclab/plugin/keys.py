"""Stash keys shared by the plugin's modules (per-config and per-item state)."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_soclab.run import ItemSpec
from pytest_soclab.models import ItemResult, ToolCall
from pytest_soclab.models import Suite
from pytest_soclab.plugin.settings import Settings

settings_key = pytest.StashKey[Settings]()
suite_key = pytest.StashKey[Suite]()
predicates_key = pytest.StashKey[dict[str, Any]]()
guard_key = pytest.StashKey[Any]()
item_spec_key = pytest.StashKey[ItemSpec]()  # as it runs (on a --soclab-variant, re-keyed)
collected_spec_key = pytest.StashKey[ItemSpec]()  # as collected, kept when the one above was re-keyed
item_result_key = pytest.StashKey[ItemResult]()
# The item's tool calls with their full results, for its HTML extra (dropped once it is made).
item_calls_key = pytest.StashKey[list[ToolCall]]()
