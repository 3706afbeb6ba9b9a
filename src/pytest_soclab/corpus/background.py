"""Diurnal benign background: what a working estate does all day, at a scale knob.

Each host gets a small set of activity templates (activities.py: closures over
precomputed values) chosen by its role; per hour, the number of activities is drawn
around `rate x diurnal(hour) x scale` and each one emits its documents through the
emitter. Nothing here depends on the attack chain.
"""

from __future__ import annotations

import math
import random

from pytest_soclab.corpus import ids
from pytest_soclab.corpus.activities import Activity, Setting, host_activities
from pytest_soclab.corpus.emit import Emitter
from pytest_soclab.corpus.timeutil import day_of_week, hour_of_day
from pytest_soclab.corpus.world import HostCtx, World

_LEAD_MS = 61_000


def diurnal_curve(peak_hour: int) -> list[float]:
    """Relative human activity per UTC hour: a smooth office-hours bump over a night floor; mean 1."""
    raw = []
    for h in range(24):
        d = min(abs(h - peak_hour), 24 - abs(h - peak_hour))
        raw.append(0.12 + math.exp(-(d**2) / (2 * 3.2**2)))
    mean = sum(raw) / 24
    return [r / mean for r in raw]


class Background:
    def __init__(self, world: World, emitter: Emitter, seed: int):
        self.w = world
        self.em = emitter
        self.seed = seed
        bg = world.recipe.background
        self.curve = diurnal_curve(bg.peak_hour_utc)
        self.plans: list[tuple[HostCtx, list[Activity], float]] = []
        rng = ids.rng_for(world.recipe.id, "clients", seed)
        # Internet clients of the public site: documentation ranges, stable for a case and seed.
        nets = ("198.51.100.", "203.0.113.", "192.0.2.")
        reserved = set(world.external_by_ip) | set(world.recipe.attack.actor_ips)
        self.clients = []
        while len(self.clients) < bg.internet_clients:
            ip = f"{nets[rng.randrange(3)]}{rng.randrange(1, 255)}"
            if ip not in reserved:
                self.clients.append(ip)
        setting = Setting(world, emitter, self.clients)
        for ctx in world.hosts.values():
            acts = host_activities(setting, ctx)
            total = sum(a.weight for a in acts)
            self.plans.append((ctx, acts, total))

    # ------------------------------------------------------------ per-hour driver

    def hour(self, hour_start: int, scale: float, rng: random.Random) -> None:
        """Emit one hour of background into the emitter (unsorted)."""
        bg = self.w.recipe.background
        h = hour_of_day(hour_start)
        weekend = day_of_week(hour_start) >= 5
        human_factor = self.curve[h] * (bg.weekend_factor if weekend else 1.0)
        per_hour = bg.events_per_host_day / 24.0 * scale
        start, end = max(hour_start, self.w.start_ms), min(hour_start + 3_600_000, self.w.end_ms)
        if end - start <= 0:
            return
        frac = (end - start) / 3_600_000
        # Activities emit a little before their own time (a DNS lookup, the session a desktop app runs in,
        # up to a minute): keep those inside this hour, whose documents are sorted together.
        lead = min(_LEAD_MS, (end - start) // 2)
        start += lead
        span = end - start
        self.em.rng = rng
        for ctx, acts, total in self.plans:
            for act in acts:
                lam = per_hour * ctx.spec.activity * act.weight / total * frac / act.docs
                if act.human:
                    lam *= human_factor
                n = _poisson(rng, lam)
                run = act.run
                for _ in range(n):
                    run(start + int(rng.random() * span))


def _poisson(rng: random.Random, lam: float) -> int:
    if lam <= 0:
        return 0
    if lam > 30:
        return max(0, int(rng.gauss(lam, math.sqrt(lam)) + 0.5))
    limit, k, p = math.exp(-lam), 0, 1.0
    while True:
        p *= rng.random()
        if p <= limit:
            return k
        k += 1
