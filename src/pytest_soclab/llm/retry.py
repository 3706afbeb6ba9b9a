"""Retries of model calls: rate limits (429, honouring Retry-After) and transient failures.

The SDKs' own retries are switched off (max_retries=0 on the client) so that
both providers follow one policy, the waits are visible (counted in usage) and
tests can observe them. Backoff is exponential without jitter: runs stay
reproducible, and parallel workers are few.
"""

from __future__ import annotations

import asyncio
import email.utils
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pytest_soclab.llm.errors import LLMError

T = TypeVar("T")

# Statuses worth another attempt: request timeout, conflict/lock, rate limit, and server-side failures
# (500-599, including Anthropic's 529 overloaded).
RETRY_STATUSES = frozenset({408, 409, 429})


def retry_after_seconds(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """The wait a server asked for: `retry-after-ms`, else `Retry-After` in seconds or as an HTTP date."""
    if not headers:
        return None
    lower = {k.lower(): v for k, v in headers.items()}
    ms = lower.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = lower.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


@dataclass(frozen=True)
class Failure:
    """A classified exception of an SDK call."""

    retryable: bool
    description: str  # one line, for the final error message
    retry_after: float | None = None
    status: int | None = None


@dataclass
class RetryPolicy:
    max_retries: int = 4
    base_delay: float = 1.0
    max_delay: float = 60.0
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)
    asleep: Callable[[float], Awaitable[None]] = field(default=asyncio.sleep, repr=False)

    def delay(self, attempt: int, failure: Failure) -> float:
        """Wait before retry number `attempt` (0-based): the server's Retry-After if any, else exponential."""
        if failure.retry_after is not None:
            return min(failure.retry_after, self.max_delay)
        return min(self.base_delay * (2**attempt), self.max_delay)


def _delay_or_give_up(
    label: str, failure: Failure, attempt: int, policy: RetryPolicy, exc: BaseException
) -> float:
    """The wait before retry number `attempt`, or the final LLMError: one decision for both loops."""
    if failure.retryable and attempt < policy.max_retries:
        return policy.delay(attempt, failure)
    tail = f" after {attempt + 1} attempts" if attempt > 0 else ""
    raise LLMError(f"{label}: {failure.description}{tail}") from exc


def call_with_retries(
    label: str,
    fn: Callable[[], T],
    classify: Callable[[BaseException], Failure | None],
    policy: RetryPolicy,
) -> tuple[T, int]:
    """Run fn, retrying retryable failures. Returns (result, retries used). Other failures raise LLMError."""
    attempt = 0
    while True:
        try:
            return fn(), attempt
        except Exception as exc:
            failure = classify(exc)
            if failure is None:
                raise
            policy.sleep(_delay_or_give_up(label, failure, attempt, policy, exc))
            attempt += 1


async def acall_with_retries(
    label: str,
    fn: Callable[[], Awaitable[T]],
    classify: Callable[[BaseException], Failure | None],
    policy: RetryPolicy,
) -> tuple[T, int]:
    """The async twin of call_with_retries (cancellation interrupts the wait)."""
    attempt = 0
    while True:
        try:
            return await fn(), attempt
        except Exception as exc:
            failure = classify(exc)
            if failure is None:
                raise
            await policy.asleep(_delay_or_give_up(label, failure, attempt, policy, exc))
            attempt += 1


def sdk_failure_classifier(sdk: Any) -> Callable[[BaseException], Failure | None]:
    """Classify the exceptions of the openai or anthropic SDK (they share their class names and fields)."""

    def classify(exc: BaseException) -> Failure | None:
        if isinstance(exc, sdk.APIStatusError):
            status = int(exc.status_code)
            message = _status_message(exc)
            headers: Mapping[str, str] | None = getattr(exc.response, "headers", None)
            retryable = status in RETRY_STATUSES or status >= 500
            kind = "rate limited" if status == 429 else "HTTP error"
            return Failure(retryable, f"{kind} {status}: {message}", retry_after_seconds(headers), status)
        if isinstance(exc, sdk.APITimeoutError):
            return Failure(True, "request timed out")
        if isinstance(exc, sdk.APIConnectionError):
            cause = exc.__cause__ or exc.__context__
            detail = f" ({type(cause).__name__}: {cause})" if cause else ""
            return Failure(True, f"connection error{detail}")
        if isinstance(exc, sdk.APIError):
            return Failure(False, f"API error: {exc}")
        return None

    return classify


def _status_message(exc: Any) -> str:
    """The provider's error message from the body, else the SDK's text; one line, bounded."""
    body = getattr(exc, "body", None)
    msg: Any = None
    if isinstance(body, dict):
        err = body.get("error", body)
        msg = err.get("message") if isinstance(err, dict) else err
    text = str(msg if msg else exc)
    text = " ".join(text.split())
    return text[:500]
