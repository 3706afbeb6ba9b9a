"""Throttled progress lines for long imports: at most one every `interval` seconds, checked cheaply."""

from __future__ import annotations

import time
from collections.abc import Callable

ProgressFn = Callable[[str], None]


class Progress:
    CHECK_EVERY = 4096  # lines between clock reads

    def __init__(self, emit: ProgressFn | None, interval: float = 1.0) -> None:
        self.emit = emit
        self.interval = interval
        self.start = time.monotonic()
        self._last = self.start
        self._countdown = self.CHECK_EVERY

    def tick(self, label: str, lines: int, events: int) -> None:
        if self.emit is None:
            return
        self._countdown -= 1
        if self._countdown > 0:
            return
        self._countdown = self.CHECK_EVERY
        now = time.monotonic()
        if now - self._last < self.interval:
            return
        self._last = now
        rate = events / max(now - self.start, 1e-9)
        self.emit(f"soclab import: {label}: {lines:,} lines, {events:,} events so far ({rate:,.0f} events/s)")

    def elapsed(self) -> float:
        return time.monotonic() - self.start
