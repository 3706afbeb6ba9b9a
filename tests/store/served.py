"""`soclab serve`'s endpoint over a store file, on a free port, for as long as the block runs."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from pytest_soclab.store.embedded import EmbeddedBackend
from pytest_soclab.store.http import serve_in_thread


@contextlib.contextmanager
def served(store_path: Path) -> Iterator[str]:
    backend = EmbeddedBackend.open(store_path)
    srv, thread = serve_in_thread(backend)
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(5)
        backend.close()
