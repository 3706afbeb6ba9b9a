"""How a failed item is shown: its headline in the short summary, its full text below.

pytest puts the whole of a plain-string failure into the short summary when it runs
on CI (or with -vv), so a multi-line verdict would be repeated there line by line.
A failure repr with a crash line keeps the summary to the headline. The repr classes
are pytest-private: isolated here, with the plain string as the fallback if they move.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

try:
    from _pytest._code.code import ReprExceptionInfo, ReprFileLocation, ReprTracebackNative
except ImportError:  # pragma: no cover
    ReprExceptionInfo = None  # type: ignore[assignment,misc]


def item_failure_repr(path: Path, text: str) -> Any:
    """Full `text` in the failure section; its first line in the summary and JUnit message."""
    if ReprExceptionInfo is None:  # pragma: no cover
        return text
    headline = text.splitlines()[0] if text else "failed"
    lines = [line + "\n" for line in text.splitlines()]
    # xdist serialises exception reprs with ReprEntryNative intact, so this survives -n.
    return ReprExceptionInfo(
        reprtraceback=ReprTracebackNative(lines),
        reprcrash=ReprFileLocation(str(path), 1, headline),
    )
