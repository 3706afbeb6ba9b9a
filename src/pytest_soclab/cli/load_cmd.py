"""`soclab load CASE --es-url URL`: put a case into a real cluster, so the same tasks run there unchanged.

For each data stream it creates an index template (with the mapping the embedded
store serves, so both backends answer with the same field types), then bulk-loads
the generated documents with the official client's helpers. This command WRITES:
give it credentials of its own; the benchmark itself only ever reads.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from pytest_soclab.errors import SoclabError
from pytest_soclab.store import EsConnection, build_client


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("load", help="load a case into a real Elasticsearch cluster (index templates + bulk)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("case", help="the case id (a directory under --corpus-dir)")
    p.add_argument("--es-url", default=None, help="cluster URL (or ELASTIC_URL)")
    p.add_argument("--api-key", default=None, help="API key (or ELASTIC_API_KEY)")
    p.add_argument("--username", default=None, help="basic-auth user (or ELASTIC_USERNAME, with ELASTIC_PASSWORD)")
    p.add_argument("--ca-certs", default=None, help="CA bundle (or ELASTIC_CA_CERTS)")
    p.add_argument("--no-verify-certs", action="store_true", help="do not verify the cluster's certificate")
    p.add_argument("--corpus-dir", type=Path, default=Path("corpus"), help="where the cases live (default ./corpus)")
    p.add_argument("--cache-dir", type=Path, default=Path(".soclab-cache"), help="built-case cache")
    p.add_argument("--scale", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--chunk-size", type=int, default=2000, help="documents per bulk request (default 2000)")
    p.add_argument("--template-priority", type=int, default=500,
                   help="priority of the created index templates (above the built-in logs-*-* at 100)")  # fmt: skip
    p.set_defaults(func=run)


def index_templates(backend: Any, streams: list[str], priority: int) -> dict[str, dict[str, Any]]:
    """One index template per stream, holding the embedded store's mapping of it."""
    out: dict[str, dict[str, Any]] = {}
    for stream in streams:
        mapping = next(iter(backend.get_mappings(stream).values()))["mappings"]
        body: dict[str, Any] = {
            "index_patterns": [stream],
            "priority": priority,
            "template": {"mappings": mapping, "settings": {"number_of_replicas": 0}},
            "_meta": {"managed_by": "pytest-soclab", "description": "soclab case data"},
        }
        if not stream.startswith("."):
            body["data_stream"] = {}
        out[f"soclab-{stream.lstrip('.')}"] = body
    return out


def run(args: argparse.Namespace) -> int:
    from elasticsearch import ApiError, TransportError, helpers

    from pytest_soclab.corpus.generate import generate
    from pytest_soclab.sim import CaseLibrary
    from pytest_soclab.store import EmbeddedBackend

    # the client first (constructing it is offline): a bad setting fails before the case is built
    conn = EsConnection.from_env(
        url=args.es_url, api_key=args.api_key, username=args.username, ca_certs=args.ca_certs,
        verify_certs=not args.no_verify_certs, request_timeout=120,
    )  # fmt: skip
    client = build_client(conn)
    lib = CaseLibrary(args.corpus_dir, args.cache_dir, scale=args.scale, seed=args.seed,
                      progress=lambda line: print(line, file=sys.stderr, flush=True))  # fmt: skip
    case = lib.get(args.case)
    backend = EmbeddedBackend.open(case.db_path)
    try:
        for name, body in index_templates(backend, case.streams, args.template_priority).items():
            client.indices.put_index_template(name=name, **body)
        total = sum(case.manifest["streams"].values())
        done = errors = 0
        actions = (
            {"_op_type": "create", "_index": stream, "_id": doc_id, "_source": doc}
            for stream, doc_id, doc in generate(case.recipe, scale=args.scale, seed=args.seed)
        )
        for ok, item in helpers.streaming_bulk(client, actions, chunk_size=args.chunk_size, raise_on_error=False):
            done += 1
            if not ok and next(iter(item.values())).get("status") != 409:  # 409: already loaded
                errors += 1
                if errors <= 5:
                    print(f"soclab load: rejected: {item}", file=sys.stderr)
            if done % 20_000 == 0:
                print(f"soclab load: {done:,}/{total:,} documents", file=sys.stderr, flush=True)
    except ApiError as exc:
        raise SoclabError(f"Elasticsearch refused the load: {exc.meta.status} {exc.message}") from None
    except TransportError as exc:  # unreachable, timed out, TLS refused
        raise SoclabError(f"cannot reach Elasticsearch at {conn.url}: {exc.message}") from None
    finally:
        backend.close()
        client.close()
    print(f"soclab load: {args.case}: {done:,} documents into {len(case.streams)} data streams, {errors} rejected")
    return 1 if errors else 0
