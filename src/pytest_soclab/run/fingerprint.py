"""Fingerprints of what a run's results depend on: suite, corpus recipes, policies, agent, each scenario.

Two results files may be merged, and a previous run's items carried into a new one, only when
these agree. Each fingerprint is the first 16 hex digits of a SHA-256 over canonical content
(file names relative to their directory, then bytes), so that moving a checkout does not change it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from pytest_soclab.models import Suite

DIGITS = 16
# What a directory's fingerprint covers: the files that change what an item sees.
CORPUS_PATTERNS: tuple[str, ...] = ("*.yaml", "*.yml", "*.json", "*.jsonl", "*.ndjson")
POLICY_PATTERNS: tuple[str, ...] = ("*.rego", "*.json", "*.yaml")
FINGERPRINT_KEYS: tuple[str, ...] = ("suite", "corpus", "policies", "agent")


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:DIGITS]


def canonical_json(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str, ensure_ascii=False).encode()


def tree_fingerprint(root: Path, patterns: Iterable[str]) -> str:
    """Names and contents of the matching files under `root` (recursively); "absent" without the directory."""
    if not root.is_dir():
        return "absent"
    files = sorted({p for pat in patterns for p in root.rglob(pat) if p.is_file()})
    h = hashlib.sha256()
    for p in files:
        h.update(p.relative_to(root).as_posix().encode() + b"\0")
        h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()[:DIGITS]


def model_fingerprint(model: BaseModel) -> str:
    return digest(canonical_json(model.model_dump(mode="json")))


def suite_fingerprint(suite: Suite) -> str:
    """Of the resolved suite (defaults merged with soclab.yaml): equal suites written differently agree."""
    return model_fingerprint(suite)


def agent_fingerprint(agent: str) -> str:
    return digest(agent.encode())


def run_fingerprints(suite: Suite, corpus_dir: Path, policy_dir: Path, agent: str) -> dict[str, str]:
    return {
        "suite": suite_fingerprint(suite),
        "corpus": tree_fingerprint(corpus_dir, CORPUS_PATTERNS),
        "policies": tree_fingerprint(policy_dir, POLICY_PATTERNS),
        "agent": agent_fingerprint(agent),
    }
