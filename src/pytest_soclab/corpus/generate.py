"""The generator: recipe (+ scale, seed) -> a time-ordered stream of (data stream, doc id, ECS document).

Work is cut into one-hour buckets: the background of a bucket is drawn with a
Random seeded from (case, seed, bucket), merged with the precompiled attack chain,
benign behaviours, alerts and threat intel falling in it, and sorted by time. The
same recipe and seed therefore give the same bytes, and memory stays bounded by
one hour of events however large the scale.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from operator import itemgetter
from typing import Any

from pytest_soclab.corpus import alerts as alerts_mod
from pytest_soclab.corpus import docs, docs_intel, ids
from pytest_soclab.corpus.attack import compile_chain
from pytest_soclab.corpus.background import Background
from pytest_soclab.corpus.benign import compile_benign
from pytest_soclab.corpus.emit import Emitter, Event
from pytest_soclab.corpus.recipe import AlertSpec, CaseRecipe
from pytest_soclab.corpus.timeutil import to_ms
from pytest_soclab.corpus.world import World

Progress = Callable[[int, int], None]  # (documents so far, expected total)
Doc = tuple[str, str, dict[str, Any]]
Stamped = tuple[int, str, str, dict[str, Any]]  # (ms, data stream, doc id, doc)
HOUR = 3_600_000

_first = itemgetter(0)


def _special_events(
    world: World, seed: int, clients: list[str]
) -> list[tuple[int, str, str, dict[str, Any]]]:
    """Attack chain + benign behaviours + their alerts + threat intel, with ids, sorted by time."""
    rid = world.recipe.id
    chain = compile_chain(world)
    benign_events, benign_out = compile_benign(world, seed)
    out: list[tuple[int, str, str, dict[str, Any]]] = []
    id_of: dict[int, str] = {}
    for n, (ts, stream, doc) in enumerate(chain.events):
        did = ids.doc_id_from(rid, "attack", n)
        id_of[id(doc)] = did
        out.append((ts, stream, did, doc))
    for n, (ts, stream, doc) in enumerate(benign_events):
        did = ids.doc_id_from(rid, "benign", seed, n)
        id_of[id(doc)] = did
        out.append((ts, stream, did, doc))
    fired: list[tuple[AlertSpec, Event]] = chain.alerts + benign_out.alerts
    for spec, source in fired:
        sid = id_of[id(source[2])]
        ats, adoc = alerts_mod.detection_alert(rid, spec, source, sid)
        out.append((ats, docs.ALERTS, ids.doc_id_from(rid, "alert", adoc["kibana"]["alert"]["uuid"]), adoc))
    out.extend(_threat_intel(world, clients))
    out.sort(key=_first)
    return out


def _threat_intel(world: World, clients: list[str]) -> list[tuple[int, str, str, dict[str, Any]]]:
    rec = world.recipe
    collector = next(
        (h for h in world.hosts.values() if h.spec.role in ("monitoring", "siem")),
        next(iter(world.hosts.values())),
    )
    rng = ids.rng_for(rec.id, "ti")
    span = world.end_ms - world.start_ms
    out = []
    for n, ind in enumerate(rec.indicators):
        first_seen = to_ms(ind.first_seen) if ind.first_seen else world.start_ms - 86_400_000 * (2 + n % 9)
        ts = world.start_ms + int(rng.random() * span * 0.2)
        iid = ids.hex_from(rec.id, "ind", ind.value, n=24)
        stream, doc = docs_intel.ti_indicator(
            ind.feed,
            ts,
            collector,
            ind.type,
            ind.value,
            ind.confidence,
            ind.description,
            first_seen,
            list(ind.tags),
            iid,
        )
        out.append((ts, stream, ids.doc_id_from(rec.id, "ti", ind.value), doc))
    used = set(clients) | set(world.ip_host) | set(world.external_by_ip) | set(rec.attack.actor_ips)
    families = ("Mirai", "Gafgyt", "XorDDoS", "Kinsing", "TeamTNT", "RedTail", "Sliver", "CobaltStrike")
    for n in range(rec.noise_indicators):
        kind = ("ipv4-addr", "domain-name", "url", "file")[n % 4]
        fam = families[int(rng.random() * len(families))]
        if kind == "ipv4-addr":
            while True:
                value = f"192.0.2.{rng.randrange(1, 255)}"
                if value not in used:
                    used.add(value)
                    break
        elif kind == "domain-name":
            value = (
                f"{ids.hex_from(rec.id, 'noise-dom', n, n=10)}.{('top', 'xyz', 'ru', 'cn', 'info')[n % 5]}"
            )
        elif kind == "url":
            value = f"http://{ids.hex_from(rec.id, 'noise-url', n, n=8)}.{('top', 'xyz', 'click')[n % 3]}/bins/{fam.lower()}.x86"
        else:
            value = ids.hex_from(rec.id, "noise-hash", n, n=64)
        feed = {"ipv4-addr": "otx", "domain-name": "otx", "url": "abusech.url", "file": "abusech.malware"}[
            kind
        ]
        ts = world.start_ms + int(rng.random() * span)
        stream, doc = docs_intel.ti_indicator(
            feed,
            ts,
            collector,
            kind,
            value,
            ("Medium", "High", "Low")[n % 3],
            f"{fam} infrastructure",
            ts - 86_400_000 * (1 + n % 30),
            [fam.lower()],
            ids.hex_from(rec.id, "noise-ind", n, n=24),
        )
        out.append((ts, stream, ids.doc_id_from(rec.id, "ti-noise", n), doc))
    return out


def expected_background(recipe: CaseRecipe, scale: float) -> int:
    """Approximate number of background documents at `scale` (for progress bars)."""
    days = (to_ms(recipe.window.end) - to_ms(recipe.window.start)) / 86_400_000
    per_day = recipe.background.events_per_host_day * sum(h.activity for h in recipe.hosts)
    return int(per_day * days * scale)


def generate(
    recipe: CaseRecipe, *, scale: float = 1.0, seed: int | None = None, progress: Progress | None = None
) -> Iterator[Doc]:
    """Yield (data_stream, doc_id, doc) for the whole case, in time order."""
    if scale < 0:
        raise ValueError("scale must not be negative")
    seed = recipe.seed if seed is None else int(seed)
    world = World(recipe)
    bg_emitter = Emitter(world, ids.rng_for(recipe.id, "bg", seed))
    background = Background(world, bg_emitter, seed)
    special = _special_events(world, seed, background.clients)
    start, end = world.start_ms, world.end_ms
    expected = expected_background(recipe, scale) + len(special)
    si = 0
    done = 0
    hour0 = start - start % HOUR
    # Events of an hour's activities that fall later (a process ending, a reply) wait for their bucket.
    carry: list[Stamped] = []
    for bucket, hour_start in enumerate(range(hour0, end, HOUR)):
        rng = ids.rng_for(recipe.id, "bg", seed, bucket)
        bg_emitter.out = []
        # The documents are acyclic: the cyclic collector scanning them while a bucket is built costs
        # half the time and frees nothing. Paused while a bucket is built, never across the yield.
        gc_was_on = gc.isenabled()
        gc.disable()
        try:
            background.hour(hour_start, scale, rng)
            batch, carry, si = _merge_bucket(bg_emitter.out, rng, hour_start, start, end, carry, special, si)
            if gc_was_on:
                # Keep the collector from rescanning this hour's documents at every young collection
                # while they are handed out: park them (and whatever else is alive) in the permanent
                # generation until the next bucket, then give them back to the oldest generation.
                gc.freeze()
        finally:
            if gc_was_on:
                gc.enable()
        try:
            for _ts, stream, did, doc in batch:
                yield stream, did, doc
        finally:
            if gc_was_on:
                gc.unfreeze()
        done += len(batch)
        if progress is not None:
            progress(done, max(expected, done))


def _merge_bucket(
    background: list[Event],
    rng: Any,
    hour_start: int,
    start: int,
    end: int,
    carry: list[Stamped],
    special: list[Stamped],
    si: int,
) -> tuple[list[Stamped], list[Stamped], int]:
    """One hour: its background (ids assigned), the carried-over and the special events, sorted by time.
    Returns (sorted batch, events for later hours, index of the next special event)."""
    hour_end = hour_start + HOUR
    batch: list[Stamped] = []
    append = batch.append
    later: list[Stamped] = []
    for ev in carry:
        (append if ev[0] < hour_end else later.append)(ev)
    next_id = ids.DocIds(rng).next
    for ts, stream, doc in background:
        if start <= ts < end:
            (append if ts < hour_end else later.append)((ts, stream, next_id(), doc))
    ns = len(special)
    while si < ns and special[si][0] < hour_end:
        ev = special[si]
        if start <= ev[0] < end:
            append(ev)
        si += 1
    batch.sort(key=_first)
    return batch, later, si
