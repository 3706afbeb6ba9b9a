"""How a failed item is shown: its headline in the short summary, its full text below.

pytest puts the whole of a plain-string failure into the short summary when it runs
on CI (or with -vv), so a multi-line verdict would be repeated there line by line.
A failure repr with a crash line keeps the summary to the headline. This is the
only module that touches `_pytest` internals (pinned to pytest 9 in pyproject).
"""

from __future__ import annotations

from pathlib import Path

from _pytest._code.code import ReprExceptionInfo, ReprFileLocation, ReprTracebackNative


def item_failure_repr(path: Path, text: str) -> ReprExceptionInfo:
    """Full `text` in the failure section; its first line in the summary and JUnit message."""
    headline = text.splitlines()[0] if text else "failed"
    lines = [line + "\n" for line in text.splitlines()]
    # xdist serialises exception reprs with ReprEntryNative intact, so this survives -n.
    return ReprExceptionInfo(
        reprtraceback=ReprTracebackNative(lines),
        reprcrash=ReprFileLocation(str(path), 1, headline),
    )
