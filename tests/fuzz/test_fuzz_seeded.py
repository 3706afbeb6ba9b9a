"""A short seeded fuzz run of the HTTP endpoint (issue 19), part of the normal tests: no 5xx, no
dropped connection, every error in Elasticsearch's shape. The long run is bench/fuzz_bench.py."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from generators import CLASSES, requests
from runner import run

from pytest_soclab.store.embedded import EmbeddedBackend
from pytest_soclab.store.http import ServeLimits, serve_in_thread

N = int(os.environ.get("SOCLAB_FUZZ_REQUESTS", "240"))


@pytest.fixture(scope="module")
def port(fuzz_store: Path) -> Iterator[int]:
    import datetime as dt

    backend = EmbeddedBackend.open(fuzz_store, now=dt.datetime(2024, 5, 2, 12, 30))
    srv, thread = serve_in_thread(backend, limits=ServeLimits(request_timeout=10.0, max_content_length=1024 * 1024))
    yield srv.server_address[1]
    srv.shutdown()
    srv.server_close()
    thread.join(5)
    backend.close()


def test_seeded_fuzz_run_has_no_server_errors(port: int) -> None:
    tally = run(port, requests(seed=19, n=N), timeout=30.0, slow_s=10.0)
    assert set(tally.by_class) == set(CLASSES)
    bad = [f for f in tally.failures]
    assert not bad, "\n".join(f"{c}: {o}: {r}" for c, o, r in bad[:20])
