"""_field_caps: each field's type across the indices an expression names, from their mappings."""

from __future__ import annotations

import fnmatch
from typing import Any

from pytest_soclab.errors import EsError

from .indices import NOTHING, narrow
from .request import Answer, ApiRequest, csv_param

# types Elasticsearch aggregates on with doc values (text needs fielddata, which is off)
_NOT_AGGREGATABLE = {"text", "match_only_text", "object", "nested", "binary", "annotated_text"}
_NOT_SEARCHABLE = {"object", "binary"}
_METADATA = {"_id": "_id", "_index": "_index", "_source": "_source", "_ignored": "_ignored",
             "_data_stream_timestamp": "_data_stream_timestamp", "_seq_no": "_seq_no", "_version": "_version",
             "_field_names": "_field_names", "_routing": "_routing", "_tier": "keyword",
             "_feature": "_feature", "_nested_path": "_nested_path", "_doc_count": "_doc_count"}  # fmt: skip
_METADATA_SEARCHABLE = {"_id", "_index", "_ignored", "_seq_no", "_version", "_field_names", "_routing", "_tier"}
_METADATA_AGGREGATABLE = {"_id", "_index", "_ignored", "_seq_no", "_version", "_routing", "_tier"}


def _flatten(props: dict[str, Any], prefix: str, out: dict[str, str]) -> None:
    for key, spec in props.items():
        name = f"{prefix}{key}"
        if "properties" in spec:
            out[name] = spec.get("type", "object")
            _flatten(spec["properties"], name + ".", out)
        else:
            out[name] = spec.get("type", "object")
        for sub, sub_spec in (spec.get("fields") or {}).items():
            out[f"{name}.{sub}"] = sub_spec.get("type", "keyword")


def _caps(ftype: str, metadata: bool, name: str) -> dict[str, Any]:
    if metadata:
        return {"type": ftype, "metadata_field": True, "searchable": name in _METADATA_SEARCHABLE,
                "aggregatable": name in _METADATA_AGGREGATABLE}  # fmt: skip
    return {"type": ftype, "metadata_field": False, "searchable": ftype not in _NOT_SEARCHABLE,
            "aggregatable": ftype not in _NOT_AGGREGATABLE}  # fmt: skip


def field_caps(req: ApiRequest) -> Answer:
    """GET|POST /[{index}/]_field_caps?fields=..."""
    body = req.object_body()
    fields = body.get("fields", csv_param(req.params, "fields"))
    if isinstance(fields, str):
        fields = [f.strip() for f in fields.split(",") if f.strip()]
    if not fields:
        raise EsError(400, "action_request_validation_exception", "Validation Failed: 1: specified fields can't be null;")
    types = set(csv_param(req.params, "types"))
    include_unmapped = req.flag("include_unmapped")
    filters = set(csv_param(req.params, "filters"))
    index = narrow(req.backend, req.index or "*", req.params)
    mappings = {} if index == NOTHING else req.backend.get_mappings(index)
    per_index: dict[str, dict[str, str]] = {}
    for name, entry in sorted(mappings.items()):
        flat: dict[str, str] = {}
        _flatten(entry.get("mappings", {}).get("properties", {}), "", flat)
        for meta, mtype in _METADATA.items():
            flat.setdefault(meta, mtype)
        if entry.get("mappings", {}).get("_data_stream_timestamp") is None:
            flat.pop("_data_stream_timestamp", None)
        per_index[name] = flat
    wanted = lambda n: any(fnmatch.fnmatchcase(n, f) for f in fields)  # noqa: E731 - a one-line predicate
    out: dict[str, dict[str, Any]] = {}
    all_names = sorted({n for flat in per_index.values() for n in flat if wanted(n)})
    for name in all_names:
        metadata = name in _METADATA
        if metadata and "-metadata" in filters:
            continue
        by_type: dict[str, list[str]] = {}
        for idx, flat in per_index.items():
            if name in flat:
                by_type.setdefault(flat[name], []).append(idx)
        missing = [i for i in per_index if name not in per_index[i]]
        if types:
            by_type = {t: v for t, v in by_type.items() if t in types}
            if not by_type:
                continue
        if "-parent" in filters and set(by_type) <= {"object", "nested"}:
            continue
        entry: dict[str, Any] = {}
        for ftype, idxs in by_type.items():
            caps = _caps(ftype, metadata, name)
            if len(by_type) > 1 or (missing and include_unmapped):
                caps["indices"] = idxs
            entry[ftype] = caps
        if missing and include_unmapped and not metadata:
            entry["unmapped"] = {"type": "unmapped", "metadata_field": False, "searchable": False,
                                 "aggregatable": False, "indices": missing}  # fmt: skip
        out[name] = entry
    return 200, {"indices": list(per_index), "fields": out}, {}
