"""Pausing Python's cyclic garbage collector around work that only makes acyclic objects.

Reference counting still frees everything; what the pause saves is the collector
rescanning every live object (a session may hold millions) for cycles there are none of.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
