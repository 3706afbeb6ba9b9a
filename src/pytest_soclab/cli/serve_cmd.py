"""`soclab serve`: the embedded store behind an Elasticsearch-compatible HTTP endpoint."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pytest_soclab.cli.args import load_case
from pytest_soclab.errors import SoclabError
from pytest_soclab.run.session import open_backend as case_backend


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "serve",
        help="serve a store over an Elasticsearch-compatible HTTP endpoint (read-only)",
        description="Serve telemetry over an Elasticsearch-compatible, read-only HTTP endpoint, so agents and MCP "
        "servers that talk to Elasticsearch directly can be benchmarked unchanged.",
    )
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--case", metavar="CASE", help="a case under --corpus-dir (built and cached on first use)")
    source.add_argument("--case-db", type=Path, metavar="PATH", help="a store file built by build_database")
    source.add_argument(
        "--index", action="append", metavar="NAME=FILE[:MAPPING]",
        help="serve an NDJSON file as index NAME, with an optional mapping JSON (repeatable)",
    )  # fmt: skip
    p.add_argument("--corpus-dir", type=Path, default=Path("corpus"), help="where the cases live (default ./corpus)")
    p.add_argument("--cache-dir", type=Path, default=Path(".soclab-cache"), help="built-case cache")
    p.add_argument("--scale", type=float, default=1.0, help="background scale of the generated case (default 1)")
    p.add_argument("--seed", type=int, default=None, help="override the case's generation seed")
    p.add_argument("--host", default="127.0.0.1", help="bind address (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=9200, help="port (default: 9200)")
    p.add_argument("--verbose", action="store_true", help="log every request to stderr")
    p.add_argument("--api-key", default=None, help="require `Authorization: ApiKey KEY` (for a shared host)")
    p.add_argument("--basic-auth", default=None, metavar="USER:PASSWORD", help="require HTTP basic auth")
    p.add_argument("--request-timeout", type=float, default=30.0, help="seconds before a request's work is cancelled (default 30)")
    p.add_argument("--max-queued", type=int, default=16, help="requests admitted at once; more get 429 (default 16)")
    p.set_defaults(func=run)


def open_backend(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    """The backend a `serve` invocation names (one branch per kind of source)."""
    from pytest_soclab.store import EmbeddedBackend, open_sources

    if getattr(args, "case", None):
        return case_backend(load_case(args), None)
    if getattr(args, "case_db", None) is not None:
        if not args.case_db.is_file():
            raise SoclabError(f"--case-db {args.case_db}: no such file")
        return EmbeddedBackend.open(args.case_db)
    if getattr(args, "index", None):
        return open_sources(list(args.index))
    raise SoclabError("nothing to serve: give --case CASE, --case-db PATH or --index NAME=FILE[:MAPPING]")


def run(args: argparse.Namespace) -> int:
    from pytest_soclab.store import Auth, ServeLimits, make_server

    backend = open_backend(args)
    limits = ServeLimits(request_timeout=getattr(args, "request_timeout", 30.0) or None,
                         max_queued=max(1, getattr(args, "max_queued", 16)))  # fmt: skip
    auth = Auth(api_key=getattr(args, "api_key", None), basic=getattr(args, "basic_auth", None))
    try:
        server = make_server(backend, args.host, args.port, verbose=args.verbose, limits=limits, auth=auth)
    except OSError as exc:
        raise SoclabError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None
    host, port = server.server_address[:2]
    print(f"soclab: serving {len(backend.list_indices('*'))} indices at http://{host}:{port} (read-only; Ctrl-C stops)",
          file=sys.stderr, flush=True)  # fmt: skip
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        backend.close()
    return 0
