"""Errors of the LLM plumbing. All are `SoclabError`s: their message is shown as is."""

from __future__ import annotations

from pytest_soclab.errors import SoclabError


class LLMError(SoclabError):
    """A model call that failed for good (after retries), or a model that cannot be used as configured."""


class MissingExtraError(LLMError):
    """An optional SDK is not installed."""

    def __init__(self, module: str, extra: str):
        self.module = module
        self.extra = extra
        super().__init__(
            f"the '{module}' package is needed for this agent or judge but is not installed;"
            f" install it with: pip install 'pytest-soclab[{extra}]'"
        )
