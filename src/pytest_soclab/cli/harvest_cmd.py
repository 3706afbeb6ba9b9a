"""`soclab harvest TASK --es-url URL`: fetch the documents behind a task's key evidence from a live
cluster into `corpus/<case>/evidence.json`.

Read-only by construction: the only call this module makes is `search`. Each key evidence
`{source, must_find}` becomes one search on the source's data stream; the hits are then
checked on this side, and only documents that really contain `must_find` are kept.
Pseudonymize the result (`soclab pseudonymize`) before it leaves the team.
"""

from __future__ import annotations

import argparse
import json
import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from pytest_soclab.errors import EsError, ScenarioFileError, SoclabError
from pytest_soclab.models import Task
from pytest_soclab.store import EsConnection, build_client

if TYPE_CHECKING:
    from elasticsearch import Elasticsearch

EVIDENCE_FORMAT = 1
DEFAULT_MAX_DOCS = 20
# Characters with a meaning in query_string syntax (escaped with a backslash).
_QS_SPECIAL = re.compile(r'([+\-=&|><!(){}\[\]^"~*?:\\/\s])')
_WINDOW = re.compile(r"^(\d+)([smhd])$")


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    sp = subparsers.add_parser(
        "harvest",
        help="fetch the documents behind a task's key evidence from a live cluster (read-only)",
        description=(
            "For each ground_truth.key_evidence {source, must_find} of TASK, search the source's data stream "
            "on a live Elasticsearch cluster (search calls only) and write the documents that contain must_find "
            "to corpus/<case>/evidence.json. Pseudonymize the file before sharing it."
        ),
    )
    sp.add_argument("task", type=Path, metavar="TASK", help="the task file (tasks/task-NN.json)")
    sp.add_argument("--es-url", default=None, metavar="URL", help="the cluster's URL (default: $ELASTIC_URL)")
    sp.add_argument("--api-key", default=None, metavar="KEY", help="API key (default: $ELASTIC_API_KEY)")
    sp.add_argument("--username", default=None, help="basic auth user (default: $ELASTIC_USERNAME)")
    sp.add_argument("--password", default=None, help="basic auth password (default: $ELASTIC_PASSWORD)")
    sp.add_argument(
        "--ca-certs", default=None, metavar="FILE",
        help="CA bundle to verify the cluster's certificate (default: $ELASTIC_CA_CERTS)",
    )  # fmt: skip
    sp.add_argument("--no-verify-certs", action="store_true", help="do not verify the TLS certificate")
    sp.add_argument("--timeout", type=float, default=30.0, metavar="S", help="request timeout in seconds")
    sp.add_argument(
        "--corpus-dir",
        type=Path,
        default=Path("corpus"),
        metavar="DIR",
        help="where case directories live (default: corpus)",
    )
    sp.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="FILE",
        help="write here instead of <corpus-dir>/<case>/evidence.json",
    )
    sp.add_argument(
        "--max-docs",
        type=int,
        default=DEFAULT_MAX_DOCS,
        metavar="N",
        help=f"documents kept per key evidence (default {DEFAULT_MAX_DOCS})",
    )
    sp.add_argument(
        "--window",
        default=None,
        metavar="DURATION",
        help="only documents within this long of the trigger's time_utc, e.g. 6h, 2d",
    )
    sp.add_argument(
        "--field",
        action="append",
        default=[],
        metavar="FIELD",
        help="search must_find in these fields only (repeatable; default: all fields)",
    )
    sp.set_defaults(func=run)


# ---------------------------------------------------------------- task and queries


def load_task(path: Path) -> Task:
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SoclabError(f"cannot read the task file {path}: {exc.strerror or exc}") from exc
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ScenarioFileError(
            str(path), [("", f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")]
        )
    try:
        return Task.model_validate(data)
    except ValidationError as exc:
        problems = [(".".join(str(x) for x in e["loc"]), e["msg"]) for e in exc.errors()]
        raise ScenarioFileError(str(path), problems) from exc


def index_expression(source: str) -> str:
    """A data stream name (logs-zeek.dns) -> the indices to search: the name and its namespaces."""
    if any(ch in source for ch in "*,"):
        return source
    return f"{source},{source}-*"


def escape_query_string(s: str) -> str:
    return _QS_SPECIAL.sub(r"\\\1", s)


def parse_window(text: str | None) -> timedelta | None:
    if text is None:
        return None
    m = _WINDOW.match(text.strip())
    if not m:
        raise SoclabError(f"--window {text!r}: expected a duration like 30m, 6h or 2d")
    n, unit = int(m.group(1)), m.group(2)
    return timedelta(**{{"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}[unit]: n})


def _pivot_time(task: Task) -> datetime | None:
    value = task.trigger.pivot.get("time_utc")
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)  # accepts a trailing Z since Python 3.11
    except ValueError:
        return None


def evidence_query(must_find: str, fields: list[str], time_range: tuple[str, str] | None) -> dict[str, Any]:
    """Candidates for documents containing must_find: the phrase in text fields, the substring in keywords.

    Both clauses are lenient (an IP or date field that cannot take the value is skipped). The
    final word is the check on this side (`contains`): the search only narrows.
    """
    target = fields or ["*"]
    query: dict[str, Any] = {
        "bool": {
            "should": [
                {"multi_match": {"query": must_find, "type": "phrase", "fields": target, "lenient": True}},
                {
                    "query_string": {
                        "query": f"*{escape_query_string(must_find)}*",
                        "fields": target,
                        "lenient": True,
                        "analyze_wildcard": False,
                        "allow_leading_wildcard": True,
                    }
                },
            ],
            "minimum_should_match": 1,
        }
    }
    if time_range is not None:
        query["bool"]["filter"] = [{"range": {"@timestamp": {"gte": time_range[0], "lte": time_range[1]}}}]
    return query


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    if value is None or isinstance(value, bool):
        return []
    return [str(value)]


def contains(source: dict[str, Any], must_find: str) -> bool:
    """Whether a document holds must_find (case-insensitive) in one of its values."""
    needle = must_find.lower()
    return any(needle in s.lower() for s in _strings(source))


# ---------------------------------------------------------------- harvest


def harvest(
    es: Any,
    task: Task,
    max_docs: int = DEFAULT_MAX_DOCS,
    window: timedelta | None = None,
    fields: list[str] | None = None,
) -> dict[str, Any]:
    """The evidence file's content for one task, fetched with `es.search` only."""
    time_range = None
    pivot = _pivot_time(task)
    if window is not None:
        if pivot is None:
            raise SoclabError(f"--window needs trigger.pivot.time_utc in {task.id}, which it does not have")
        time_range = ((pivot - window).isoformat(), (pivot + window).isoformat())
    entries = []
    for ke in task.ground_truth.key_evidence:
        index = index_expression(ke.source)
        resp = _search(
            es,
            index=index,
            query=evidence_query(ke.must_find, fields or [], time_range),
            size=max(max_docs * 5, 50),  # room for candidates the check drops
            sort=[{"@timestamp": {"order": "asc", "unmapped_type": "date"}}],
            track_total_hits=True,
            ignore_unavailable=True,
            allow_no_indices=True,
            expand_wildcards="open,hidden",
        )
        hits = resp.get("hits", {}).get("hits", [])
        docs = [
            {"_index": h.get("_index"), "_id": h.get("_id"), "_source": h.get("_source", {})}
            for h in hits
            if contains(h.get("_source", {}), ke.must_find)
        ][:max_docs]
        entries.append(
            {
                "source": ke.source,
                "must_find": ke.must_find,
                "index": index,
                "candidates": len(hits),
                "documents": docs,
            }
        )
    return {"format": EVIDENCE_FORMAT, "task": task.id, "case": task.source_case, "evidence": entries}


def _search(es: Any, **kwargs: Any) -> dict[str, Any]:
    from elasticsearch import ApiError, TransportError

    try:
        resp = es.search(**kwargs)
    except ApiError as exc:
        body = exc.body if isinstance(exc.body, dict) else {"error": str(exc.body or exc.message)}
        raise EsError.from_body(body, exc.meta.status) from exc
    except TransportError as exc:
        raise SoclabError(f"cannot reach Elasticsearch: {exc.message}") from exc
    return dict(resp.body if hasattr(resp, "body") else resp)


def make_client(args: argparse.Namespace) -> Elasticsearch:
    conn = EsConnection.from_env(
        url=args.es_url, api_key=args.api_key, username=args.username, password=args.password,
        ca_certs=args.ca_certs, verify_certs=not args.no_verify_certs, request_timeout=args.timeout,
    )  # fmt: skip
    return build_client(conn)


def run(args: argparse.Namespace) -> int:
    task = load_task(args.task)
    if not task.ground_truth.key_evidence:
        raise SoclabError(f"{args.task}: the task has no ground_truth.key_evidence to harvest")
    if args.max_docs < 1:
        raise SoclabError("--max-docs must be at least 1")
    window = parse_window(args.window)
    es = make_client(args)
    try:
        result = harvest(es, task, max_docs=args.max_docs, window=window, fields=args.field)
    finally:
        es.close()
    out = args.out or (args.corpus_dir / task.source_case / "evidence.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    missing = [e for e in result["evidence"] if not e["documents"]]
    total = sum(len(e["documents"]) for e in result["evidence"])
    print(
        f"harvested {total} document(s) for {len(result['evidence'])} key evidence item(s) of {task.id} into {out}"
    )
    for e in missing:
        print(
            f"  no document in {e['index']} contains {e['must_find']!r} ({e['candidates']} candidate(s) checked)"
        )
    print("pseudonymize it before sharing: soclab pseudonymize ... --out DIR --key-file K")
    return 1 if missing else 0
