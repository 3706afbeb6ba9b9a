"""Threat intel documents: the indicators of the abuse.ch, OTX and MISP feeds.

Fresh top-level dicts sharing their static blocks: read-only (see docs.py).
"""

from __future__ import annotations

from typing import Any

from pytest_soclab.corpus.docs import DS, ECS, TI_STREAMS, dataset_of
from pytest_soclab.corpus.timeutil import iso_ms
from pytest_soclab.corpus.world import HostCtx


def ti_indicator(
    feed: str,
    ts: int,
    collector: HostCtx,
    itype: str,
    value: str,
    confidence: str,
    description: str,
    first_seen: int,
    tags: list[str],
    indicator_id: str,
) -> tuple[str, dict[str, Any]]:
    stream = TI_STREAMS[feed]
    feed_name = {
        "abusech.url": "AbuseCH URL",
        "abusech.malware": "AbuseCH Malware",
        "otx": "AlienVault OTX",
        "misp": "MISP",
    }[feed]
    provider = {
        "abusech.url": "URLhaus",
        "abusech.malware": "MalwareBazaar",
        "otx": "AlienVault OTX",
        "misp": "misp",
    }[feed]
    ind: dict[str, Any] = {
        "confidence": confidence,
        "first_seen": iso_ms(first_seen),
        "id": [indicator_id],
        "last_seen": iso_ms(ts),
        "marking": {"tlp": "CLEAR"},
        "provider": provider,
        "type": itype,
    }
    if description:
        ind["description"] = description
    if itype == "ipv4-addr":
        ind["ip"] = value
    elif itype == "domain-name":
        ind["url"] = {"domain": value}
    elif itype == "url":
        rest = value.split("://", 1)[-1]
        ind["url"] = {"domain": rest.split("/", 1)[0].split(":")[0], "full": value, "original": value}
    else:
        ind["file"] = {"hash": {"sha256": value}}
    doc = {
        "@timestamp": iso_ms(ts),
        "agent": collector.filebeat_agent,
        "data_stream": DS[stream],
        "ecs": ECS,
        "event": {
            "category": ["threat"],
            "dataset": dataset_of(stream),
            "kind": "enrichment",
            "module": dataset_of(stream).split(".")[0],
            "type": ["indicator"],
        },
        "tags": tags,
        "threat": {"feed": {"name": feed_name}, "indicator": ind},
    }
    return stream, doc
