"""Merge the results files of shards of one run into the results of the whole run.

Every statistic is recomputed on the union of the items (`scoring.build_scorecard`), never
averaged from the shards' summaries. Files that cannot be shards of one run are refused, with
what differs: the fingerprints (suite, corpus, policies, agent) and the settings that change
what an item does or how it is scored.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pytest_soclab.errors import SoclabError
from pytest_soclab.models import CollectionInfo, ItemResult, ResultsFile, Suite
from pytest_soclab.run.fingerprint import FINGERPRINT_KEYS
from pytest_soclab.scoring import build_scorecard

# RunInfo fields that shards of one run share (besides the fingerprints).
SHARED_SETTINGS: tuple[str, ...] = ("judge", "modes", "repeats", "backend", "scale", "seed")


class MergeRefused(SoclabError):
    """The files are not shards of one run."""


def check_compatible(files: Sequence[tuple[Path, ResultsFile]]) -> None:
    """Raise MergeRefused naming every difference between the first file and another."""
    (ref_path, ref), *others = files
    problems: list[str] = []
    for path, res in files:
        if not res.run.fingerprints:
            problems.append(f"{path}: records no fingerprints (written by an older pytest-soclab): cannot check it")
        if res.run.suite_config is None:
            problems.append(f"{path}: records no suite configuration: cannot recompute its scorecard")
        if res.schema_version != ref.schema_version:
            problems.append(f"schema_version differs: {ref_path} {ref.schema_version}, {path} {res.schema_version}")
    for path, res in others:
        for key in FINGERPRINT_KEYS:
            a, b = ref.run.fingerprints.get(key), res.run.fingerprints.get(key)
            if a != b and ref.run.fingerprints and res.run.fingerprints:
                problems.append(f"the {key} differ: {ref_path} has {key} fingerprint {a}, {path} has {b}")
        for name in SHARED_SETTINGS:
            a, b = getattr(ref.run, name), getattr(res.run, name)
            if a != b:
                problems.append(f"{name} differs: {ref_path} has {a!r}, {path} has {b!r}")
        if ref.run.agent != res.run.agent and "agent" not in " ".join(problems):
            problems.append(f"the agent differs: {ref_path} ran {ref.run.agent!r}, {path} ran {res.run.agent!r}")
    seen: dict[str, Path] = {}
    for path, res in files:
        for item in res.items:
            if item.nodeid in seen:
                problems.append(f"item {item.nodeid} is in both {seen[item.nodeid]} and {path}")
            seen.setdefault(item.nodeid, path)
    if problems:
        raise MergeRefused("refusing to merge: " + "; ".join(dict.fromkeys(problems)))


def merged_collection(parts: Sequence[CollectionInfo]) -> CollectionInfo:
    missing = [nid for c in parts for nid in c.missing]
    interrupted = any(c.interrupted for c in parts)
    return CollectionInfo(
        expected=sum(c.expected for c in parts),
        reported=sum(c.reported for c in parts),
        missing=missing,
        interrupted=interrupted,
        complete=all(c.complete for c in parts) and not missing and not interrupted,
    )


def merge_results(files: Sequence[tuple[Path, ResultsFile]]) -> ResultsFile:
    if not files:
        raise MergeRefused("nothing to merge")
    check_compatible(files)
    first = files[0][1]
    items: list[ItemResult] = [item for _, res in files for item in res.items]
    suite = Suite.model_validate(first.run.suite_config)
    return build_scorecard(items, suite, first.run, merged_collection([res.collection for _, res in files]))
