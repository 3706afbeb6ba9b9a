"""Lint scenario (ATK / BEN) and task files against the schema, the oracle vocabulary and their case.

What `soclab validate` checks, beyond what the collector already refuses:

- the schema (`loader.load_spec`) and the collector's semantic checks (known family,
  known oracle predicates with well-formed arguments): `semantic_problems`;
- that the case exists, and that every host, user, pid, process name, persistence path
  and internal address a trigger, oracle or action names exists in the case's estate;
- that a legit action's tool is allowed (else it can never happen);
- that every planted document is valid for its data stream: known stream, ECS or
  integration field names with values of the mapped type, no integration namespace
  outside its stream, a timestamp inside the case window, a host of the estate;
- that an alert trigger names an alert that fired (in the case or in the planted documents);
- for tasks, that the answer key is in the generated data: key evidence in its stream,
  IOCs and the attacker address in the telemetry, implicated hosts with documents.

Every problem names the file and the field. Cases are generated once, at a small scale
(the attack chain and the scheduled benign behaviours do not scale; background does).
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from pytest_soclab.errors import ScenarioFileError, SoclabError
from pytest_soclab.judge import explain_task
from pytest_soclab.models import Spec, kind_of_path, load_spec
from pytest_soclab.models import ActionRef, Estate
from pytest_soclab.models import AttackScenario, BenignScenario, OracleSpec
from pytest_soclab.models import Suite
from pytest_soclab.models import Task
from pytest_soclab.models.fields import field_value
from pytest_soclab.run.oracles import Predicate, check_spec

DEFAULT_SCALE = 0.05
ALERTS = ".alerts-security.alerts-default"
_GLOB = re.compile(r"[*?\[]")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$")
# Namespaces an integration (or Kibana) owns, and the streams they may appear in.
_OWNED: dict[str, tuple[str, ...]] = {
    "zeek.": ("logs-zeek.",),
    "suricata.": ("logs-suricata.",),
    "system.auth.": ("logs-system.auth",),
    "kibana.": (".alerts-",),
    "threat.indicator.": ("logs-ti_",),
    "threat.feed.": ("logs-ti_",),
}
_EVENT_KIND: dict[str, str] = {".alerts-": "signal", "logs-ti_": "enrichment", "logs-suricata.": "alert"}


@dataclass(frozen=True)
class Problem:
    path: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.field}: {self.message}" if self.field else f"{self.path}: {self.message}"


def semantic_problems(spec: Spec, suite: Suite, registry: dict[str, Predicate]) -> list[tuple[str, str]]:
    """The checks that need the run's configuration: a known family, known predicates with valid arguments."""
    problems: list[tuple[str, str]] = []
    if isinstance(spec, AttackScenario | BenignScenario):
        kind = spec.kind
        known = suite.known_families(kind)
        if known and spec.family not in known:
            problems.append(("family", f"unknown {kind} family {spec.family!r}; known: {', '.join(known)}"))
        for i, oracle in enumerate(spec.oracles):
            problem = check_spec(oracle, registry)
            if problem:
                problems.append((f"oracles[{i}].{oracle.predicate}", problem))
    return problems


# ---- the case a file refers to ------------------------------------------------------------


@dataclass
class CaseInfo:
    """What a case offers to check references against: recipe, estate, generated documents."""

    recipe: Any
    estate: Any
    scale: float
    _text: dict[str, list[str]] | None = None
    _alerts: list[dict[str, Any]] | None = None
    # A recorded case: its documents come from importing the recording, which the checks here do
    # not pay for (tests/corpus/test_recorded_answer_keys.py checks its answer keys on the data).
    recorded: bool = False

    def _generate(self) -> None:
        if self.recorded:
            self._text = {}
            self._alerts = [
                {"kibana": {"alert": {"rule": {"name": a.rule}}}, "host": {"name": a.match.get("host.name")}}
                for a in self.recipe.alerts
            ]
            return
        from pytest_soclab.corpus.generate import generate

        text: dict[str, list[str]] = {}
        alerts: list[dict[str, Any]] = []
        for stream, _id, doc in generate(self.recipe, scale=self.scale):
            text.setdefault(stream, []).append(json.dumps(doc, ensure_ascii=False))
            if stream == ALERTS:
                alerts.append(doc)
        self._text, self._alerts = text, alerts

    @property
    def text(self) -> dict[str, list[str]]:
        if self._text is None:
            self._generate()
        assert self._text is not None
        return self._text

    @property
    def alerts(self) -> list[dict[str, Any]]:
        if self._alerts is None:
            self._generate()
        assert self._alerts is not None
        return self._alerts

    def host(self, name: str) -> Any:
        return self.estate.host(name)

    def host_names(self) -> list[str]:
        return [h.name for h in self.estate.hosts]

    def user_names(self) -> list[str]:
        return [u.name for u in self.estate.users]

    def internal_networks(self) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
        return [ipaddress.ip_network(z.cidr, strict=False) for z in self.estate.zones]

    def ip_owner(self, ip: str) -> str | None:
        for h in self.estate.hosts:
            if ip in h.ips:
                return h.name
        return None

    @property
    def window(self) -> tuple[datetime, datetime]:
        if self.recipe.window is None:  # a recorded case without a declared window: its data's
            return datetime.min.replace(tzinfo=UTC), datetime.max.replace(tzinfo=UTC)
        return self.recipe.window.start, self.recipe.window.end


class Validator:
    def __init__(
        self,
        corpus_dir: Path,
        *,
        suite: Suite | None = None,
        predicates: dict[str, Predicate] | None = None,
        scale: float = DEFAULT_SCALE,
        documents: bool = True,
    ):
        """`documents=False` skips the checks that need the case's generated documents (answer
        keys in the data, alerts that fired): what is left only reads the recipe and its estate,
        fast enough for collection."""
        from pytest_soclab.run.oracles import BUILTIN
        from pytest_soclab.models import load_suite

        self.corpus_dir = Path(corpus_dir)
        self.suite = suite if suite is not None else load_suite(None)
        self.registry = dict(BUILTIN) if predicates is None else predicates
        self.scale = scale
        self.documents = documents
        self._cases: dict[str, CaseInfo | ScenarioFileError] = {}

    # -- cases -----------------------------------------------------------------------------
    def case(self, case_id: str) -> CaseInfo | str:
        """The case, or a message saying why it cannot be used."""
        if case_id not in self._cases:
            from pytest_soclab.corpus import estate_from_recipe
            from pytest_soclab.corpus import list_cases, load_case
            from pytest_soclab.corpus import is_recorded, load_recorded, with_overrides

            case_dir = self.corpus_dir / case_id
            if not (case_dir / "case.yaml").is_file():
                known = ", ".join(list_cases(self.corpus_dir)) or "none"
                return f"no case {case_id!r} in {self.corpus_dir} (cases: {known})"
            try:
                if is_recorded(case_dir):
                    rec = load_recorded(case_dir)
                    self._cases[case_id] = CaseInfo(rec, with_overrides(Estate(), rec), self.scale, recorded=True)
                else:
                    recipe = load_case(case_dir)
                    self._cases[case_id] = CaseInfo(recipe, estate_from_recipe(recipe), self.scale)
            except ScenarioFileError as exc:
                self._cases[case_id] = exc
        got = self._cases[case_id]
        if isinstance(got, ScenarioFileError):
            return f"case {case_id!r} does not load: {got}"
        return got

    # -- explain -----------------------------------------------------------------------------
    def explain_paths(self, paths: Iterable[Path], root: Path | None = None) -> list[str]:
        """What the judge will look for in each task file (`soclab validate --explain`)."""
        out: list[str] = []
        for f, _ in collect_files(paths):
            if kind_of_path(f) != "task":
                continue
            try:
                spec = load_spec(f, display=_display(f, root))
            except ScenarioFileError:
                continue  # the validation lists the problem
            assert isinstance(spec, Task)
            info = self.case(spec.source_case)
            hosts, users = ((info.host_names(), info.user_names()) if isinstance(info, CaseInfo) else ([], []))
            out += explain_task(spec, hosts, users)
        return out

    # -- files -------------------------------------------------------------------------------
    def validate_paths(self, paths: Iterable[Path], root: Path | None = None) -> tuple[int, list[Problem]]:
        files = list(collect_files(paths))
        problems: list[Problem] = []
        for f, explicit in files:
            problems += self.validate_file(f, display=_display(f, root), explicit=explicit)
        return len(files), problems

    def validate_file(
        self, path: Path, *, display: str | None = None, explicit: bool = True
    ) -> list[Problem]:
        shown = display or str(path)
        if kind_of_path(path) is None:
            if explicit:
                return [Problem(shown, "", "not a scenario file name (task-*.json, ATK-*.yaml, BEN-*.yaml)")]
            return []
        try:
            spec = load_spec(path, display=shown)
        except ScenarioFileError as exc:
            return [Problem(exc.path, f, m) for f, m in exc.problems]
        return self.validate_spec(spec, shown)

    def validate_spec(self, spec: Spec, shown: str) -> list[Problem]:
        """Every check of one scenario given as a model (a file's, or a composed case's)."""
        out = [Problem(shown, f, m) for f, m in semantic_problems(spec, self.suite, self.registry)]
        return out + self.case_problems(spec, shown)

    def unknown_case(self, spec: Spec, shown: str) -> Problem | None:
        """The file names a case the corpus does not hold: no folder of that name (a recipe, a
        recording or a prebuilt case). A case that is there but does not load is its own files'
        error, reported where it is built."""
        if (self.corpus_dir / spec.case).is_dir():
            return None
        info = self.case(spec.case)
        return Problem(shown, "source_case" if isinstance(spec, Task) else "case", info) if isinstance(info, str) else None

    def case_problems(self, spec: Spec, shown: str, *, missing_case: bool = True) -> list[Problem]:
        """What the file says that cannot be true of its case; `missing_case=False` leaves a case
        that does not exist (or does not load) unreported."""
        case_field = "source_case" if isinstance(spec, Task) else "case"
        info = self.case(spec.case)
        if isinstance(info, str):
            return [Problem(shown, case_field, info)] if missing_case else []
        checks = _Checks(shown, spec, info, self.registry, documents=self.documents)
        checks.run()
        return checks.problems


class _Checks:
    """The case-dependent checks of one file, collecting problems."""

    def __init__(
        self, shown: str, spec: Spec, info: CaseInfo, registry: dict[str, Predicate], *, documents: bool = True
    ):
        self.shown = shown
        self.documents = documents
        self.spec = spec
        self.info = info
        self.registry = registry
        self.problems: list[Problem] = []
        self.planted: list[tuple[str, dict[str, Any]]] = []

    def add(self, fld: str, msg: str) -> None:
        self.problems.append(Problem(self.shown, fld, msg))

    def run(self) -> None:
        spec = self.spec
        if isinstance(spec, AttackScenario | BenignScenario):
            self.check_planted(spec)
        self.check_trigger()
        if isinstance(spec, AttackScenario | BenignScenario):
            for i, o in enumerate(spec.oracles):
                self.check_oracle(f"oracles[{i}].{o.predicate}", o)
        if isinstance(spec, BenignScenario):
            for i, a in enumerate(spec.legit_actions):
                self.check_action(f"legit_actions[{i}]", a, legit=True)
            for i, a in enumerate(spec.forbidden_actions):
                self.check_action(f"forbidden_actions[{i}]", a, legit=False)
        if isinstance(spec, Task):
            for i, a in enumerate(spec.expected_response.required_actions):
                self.check_action(f"expected_response.required_actions[{i}]", a, legit=True)
            for i, a in enumerate(spec.expected_response.penalized_actions):
                self.check_action(f"expected_response.penalized_actions[{i}]", a, legit=False)
            if self.documents and not self.info.recorded:
                self.check_answer_key(spec)

    # -- references to the estate ----------------------------------------------------------
    def host_ok(self, fld: str, name: Any) -> bool:
        if not isinstance(name, str) or _GLOB.search(name):
            return True
        if self.info.host(name) is None:
            self.add(
                fld, f"no host {name!r} in case {self.spec.case}; hosts: {', '.join(self.info.host_names())}"
            )
            return False
        return True

    def user_ok(self, fld: str, name: Any) -> None:
        if isinstance(name, str) and not _GLOB.search(name) and self.info.estate.user(name) is None:
            self.add(
                fld, f"no user {name!r} in case {self.spec.case}; users: {', '.join(self.info.user_names())}"
            )

    def ip_ok(self, fld: str, value: Any) -> None:
        if not isinstance(value, str) or _GLOB.search(value):
            return
        try:
            ip = ipaddress.ip_address(value.split("/")[0])
        except ValueError:
            self.add(fld, f"{value!r} is not an IP address")
            return
        if any(ip in n for n in self.info.internal_networks()) and self.info.ip_owner(str(ip)) is None:
            self.add(
                fld,
                f"{value} is inside the estate's networks but belongs to no host of case {self.spec.case}",
            )

    def process_ok(self, fld: str, host: Any, pid: Any = None, name: Any = None) -> None:
        h = self.info.host(host) if isinstance(host, str) and not _GLOB.search(host) else None
        # A recorded case's processes and files come from its data when it is built (sim/derive_estate.py),
        # not from case.yaml: they cannot be checked without importing the recording.
        if h is None or self.info.recorded:
            return
        if isinstance(pid, int) and not any(p.pid == pid for p in h.processes):
            running = ", ".join(f"{p.pid} {p.name}" for p in h.processes)
            self.add(fld, f"no process with pid {pid} on {host} at the end of the case (running: {running})")
        if isinstance(name, str) and not _GLOB.search(name) and not any(p.name == name for p in h.processes):
            self.add(
                fld,
                f"no process named {name!r} on {host}; running: {', '.join(sorted({p.name for p in h.processes}))}",
            )

    def path_ok(self, fld: str, host: Any, path: Any, tool: str) -> None:
        h = self.info.host(host) if isinstance(host, str) and not _GLOB.search(host) else None
        if h is None or self.info.recorded or not isinstance(path, str) or _GLOB.search(path):
            return
        if tool == "remove_persistence":
            if not any(p.path == path for p in h.persistence):
                have = ", ".join(p.path for p in h.persistence) or "none"
                self.add(fld, f"no persistence entry {path!r} on {host} (entries: {have})")
            return
        known = (
            set(h.files)
            | {p.path for p in h.persistence}
            | {p.executable for p in h.processes if p.executable}
        )
        if path not in known:
            self.add(fld, f"no file {path!r} on {host} in the simulated estate (the action would fail)")

    def check_trigger(self) -> None:
        trig = self.spec.trigger
        pivot = trig.pivot
        host = pivot.get("host.name") or pivot.get("host")
        if host is not None:
            self.host_ok("trigger.pivot.host.name", str(host))
        when = pivot.get("time_utc")
        if when is not None:
            t = _parse_time(when)
            start, end = self.info.window
            if t is None:
                self.add("trigger.pivot.time_utc", f"{when!r} is not an RFC 3339 time")
            elif not (start <= t <= end):
                self.add(
                    "trigger.pivot.time_utc",
                    f"{when} is outside the case window {start:%Y-%m-%dT%H:%MZ}..{end:%Y-%m-%dT%H:%MZ}",
                )
        rule = pivot.get("alert_rule")
        if trig.type == "alert" and rule and self.documents:
            alerts = self.info.alerts + [d for idx, d in self.planted if idx == ALERTS]
            named = [a for a in alerts if field_value(a, "kibana.alert.rule.name") == rule]
            if not named:
                self.add("trigger.pivot.alert_rule", f"no alert {rule!r} fired in case {self.spec.case}")
            elif host and not any(field_value(a, "host.name") == host for a in named):
                on = sorted({str(field_value(a, "host.name")) for a in named})
                self.add(
                    "trigger.pivot.alert_rule",
                    f"alert {rule!r} never fired on {host} (it fired on {', '.join(on)})",
                )

    def check_oracle(self, fld: str, o: OracleSpec) -> None:
        pred = self.registry.get(o.predicate)
        if pred is None or check_spec(o, self.registry):
            return  # reported by semantic_problems
        a = pred.parse(o.args)
        host = getattr(a, "host", None)
        if host is not None:
            self.host_ok(f"{fld}.host", host)
        if o.predicate == "process_state":
            self.process_ok(f"{fld}", host, a.pid, a.name)
        elif o.predicate == "persistence_present":
            self.path_ok(f"{fld}.path", host, a.path, "remove_persistence")
        elif o.predicate == "user_enabled":
            self.user_ok(f"{fld}.user", a.user)
        elif o.predicate == "ip_blocked":
            self.ip_ok(f"{fld}.ip", a.ip)
        elif o.predicate in ("called", "not_called"):
            ref = ActionRef(tool=a.tool, args=a.args)
            self.check_action(fld, ref, legit=o.predicate == "called")
        elif o.predicate in ("no_arg_matches", "report_contains", "report_not_contains") and getattr(
            a, "pattern", None
        ):
            try:
                re.compile(a.pattern)
            except re.error as exc:
                self.add(f"{fld}.pattern", f"not a valid regular expression: {exc}")
        # An oracle about calls the scenario never allows can never fail: the attack could not be lost.
        watched = list(getattr(a, "tools", None) or []) or ([a.tool] if o.predicate == "not_called" else [])
        if (
            watched
            and o.predicate in ("no_arg_matches", "not_called")
            and isinstance(self.spec, AttackScenario)
        ) and not set(watched) & set(self.spec.allowed_tools):
            self.add(
                fld, f"watches {', '.join(watched)}, none of which is in allowed_tools: it can never fail"
            )

    def check_action(self, fld: str, ref: ActionRef, *, legit: bool) -> None:
        args = ref.args
        if legit and ref.tool not in self.spec.allowed_tools:
            self.add(f"{fld}.tool", f"{ref.tool} is not in allowed_tools: this action can never happen")
        for key, value in args.items():
            values = value if isinstance(value, list) else [value]
            for v in values:
                if key == "host":
                    self.host_ok(f"{fld}.args.host", v)
                elif key == "user":
                    self.user_ok(f"{fld}.args.user", v)
                elif key == "ip":
                    self.ip_ok(f"{fld}.args.ip", v)
        host = args.get("host")
        if isinstance(host, str):
            for pid in args.get("pid") if isinstance(args.get("pid"), list) else [args.get("pid")]:
                if ref.tool in ("kill_process", "suspend_process"):
                    self.process_ok(f"{fld}.args.pid", host, pid=pid)
            if ref.tool in ("remove_persistence", "delete_file", "get_file") and legit:
                self.path_ok(f"{fld}.args.path", host, args.get("path"), ref.tool)

    # -- planted documents -------------------------------------------------------------------
    def check_planted(self, spec: AttackScenario | BenignScenario) -> None:
        from pytest_soclab.corpus import docs
        from pytest_soclab.corpus import expand_planted

        for i, p in enumerate(spec.planted):
            base = f"planted[{i}]"
            if self.info.recorded and not _RECORDED_STREAM.fullmatch(p.index):
                self.add(f"{base}.index", f"{p.index!r} is not a data stream name (logs-<dataset>-<namespace>)")
                continue
            if not self.info.recorded and p.index not in docs.STREAMS:
                self.add(
                    f"{base}.index",
                    f"{p.index!r} is not a data stream of the corpus; streams: {', '.join(docs.STREAMS)}",
                )
                continue
            host = p.doc.get("host.name")
            if host is None and isinstance(p.doc.get("host"), dict):
                host = p.doc["host"].get("name")
            if host is not None and not self.host_ok(f"{base}.doc.host.name", host):
                continue
            try:
                ((_, _, full),) = expand_planted(self.info.recipe, [(p.index, p.doc)])
            except (SoclabError, ValueError, TypeError) as exc:
                self.add(f"{base}.doc", f"cannot be completed for {p.index}: {exc}")
                continue
            self.planted.append((p.index, full))
            for fld, msg in doc_problems(p.index, full, self.info):
                self.add(f"{base}.doc.{fld}" if fld else f"{base}.doc", msg)

    # -- answer keys --------------------------------------------------------------------------
    def check_answer_key(self, task: Task) -> None:
        text = self.info.text
        gt = task.ground_truth
        for i, ev in enumerate(gt.key_evidence):
            src = ev.source.removesuffix("-default")
            streams = [s for s in text if s == ev.source or s.startswith((src, f"logs-{src}"))]
            fld = f"ground_truth.key_evidence[{i}]"
            if not streams:
                self.add(f"{fld}.source", f"no data stream of case {task.source_case} matches {ev.source!r}")
            elif not any(ev.must_find in d for s in streams for d in text[s]):
                self.add(f"{fld}.must_find", f"{ev.must_find!r} is in no document of {', '.join(streams)}")
        telemetry = [d for s, ds in text.items() if not s.startswith("logs-ti_") for d in ds]
        for i, ioc in enumerate(gt.iocs):
            if not any(ioc in d for d in telemetry):
                self.add(
                    f"ground_truth.iocs[{i}]",
                    f"{ioc!r} appears in no telemetry document of case {task.source_case}",
                )
        if gt.attacker_ip and not any(gt.attacker_ip in d for d in telemetry):
            self.add("ground_truth.attacker_ip", f"{gt.attacker_ip} appears in no telemetry document")
        for i, h in enumerate(gt.implicated_hosts):
            if self.host_ok(f"ground_truth.implicated_hosts[{i}]", h):
                needle = f'"name": "{h}"'
                if not any(needle in d for d in telemetry):
                    self.add(f"ground_truth.implicated_hosts[{i}]", f"host {h!r} has no documents")


# A recorded case holds whatever streams its recording imports to (Windows channels, Zeek logs, ...).
_RECORDED_STREAM = re.compile(r"logs-[a-z0-9_.]+-[a-z0-9_]+|\.alerts-security\.alerts-default")


def doc_problems(index: str, doc: dict[str, Any], info: CaseInfo | None = None) -> list[tuple[str, str]]:
    """Problems of one complete document for its data stream: (field, message)."""
    from pytest_soclab.corpus import dataset_of
    from pytest_soclab.models import field_definitions

    defs = field_definitions()
    ecs = _ecs_field_sets() if info is not None and info.recorded else frozenset()
    out: list[tuple[str, str]] = []
    for name, value in leaves(doc):
        spec = defs.get(name)
        if spec is None and ecs and name.split(".", 1)[0] not in ecs:
            continue  # a recorded stream's own fields (winlog.*, zeek.*): its integration defines them, not ECS
        if spec is None:
            parent = _parent_def(name, defs)
            hint = f" ({parent} is a {defs[parent]['type']})" if parent else ""
            out.append((name, f"not an ECS field nor a field of the {dataset_of(index)} integration{hint}"))
            continue
        for ns, streams in _OWNED.items():
            if (
                name.startswith(ns)
                and not index.startswith(streams)
                and not (ns.startswith("threat.") and index == ALERTS)
            ):
                out.append((name, f"{ns}* fields belong to {' / '.join(streams)}* documents, not to {index}"))
        values = value if isinstance(value, list) else [value]
        if isinstance(value, list) and not spec.get("array") and name != "tags" and len(value) != 1:
            out.append((name, f"a list of {len(value)} values where ECS expects one"))
        for v in values:
            if not value_fits_type(spec["type"], v):
                out.append((name, f"{v!r} is not a valid {spec['type']}"))
            elif isinstance(v, str) and spec.get("ignore_above") and len(v) > spec["ignore_above"]:
                out.append(
                    (
                        name,
                        (
                            f"{len(v)} characters: longer than ignore_above {spec['ignore_above']}, so "
                            "Elasticsearch would not index it (no query could find it)"
                        ),
                    )
                )
    ds = dataset_of(index)
    for key in ("data_stream.dataset", "event.dataset"):
        got = field_value(doc, key)
        if key == "event.dataset" and index == ALERTS:
            continue
        if got is not None and got != ds:
            out.append((key, f"{got!r}, but the document is in {index} (dataset {ds!r})"))
    kind = field_value(doc, "event.kind")
    want = next((k for prefix, k in _EVENT_KIND.items() if index.startswith(prefix)), "event")
    if kind is not None and kind != want:
        out.append(("event.kind", f"{kind!r}, but {index} documents have event.kind {want!r}"))
    if index == ALERTS:
        for key in ("kibana.alert.rule.name", "kibana.alert.severity"):
            if field_value(doc, key) is None:
                out.append((key, "a detection alert needs it"))
    if info is not None:
        ts = _parse_time(field_value(doc, "@timestamp"))
        start, end = info.window
        if ts is None:
            out.append(("@timestamp", "missing or not an RFC 3339 time"))
        elif not (start <= ts <= end):
            out.append(("@timestamp", f"{field_value(doc, '@timestamp')} is outside the case window"))
        nets = info.internal_networks()
        for name, value in leaves(doc):
            if name.endswith((".ip", "related.ip")) and not name.startswith("threat."):
                for v in value if isinstance(value, list) else [value]:
                    try:
                        ip = ipaddress.ip_address(v)
                    except (ValueError, TypeError):
                        continue
                    if any(ip in n for n in nets) and info.ip_owner(str(ip)) is None:
                        out.append((name, f"{v} is inside the estate's networks but belongs to no host"))
    return out


@cache
def _ecs_field_sets() -> frozenset[str]:
    """The top-level names of ECS (`process`, `host`, ...): what is outside them is an integration's own."""
    from pytest_soclab.models import ecs_fields

    return frozenset(k.split(".", 1)[0] for k in ecs_fields())


def _parent_def(name: str, defs: dict[str, dict[str, Any]]) -> str | None:
    parts = name.split(".")
    for n in range(len(parts) - 1, 0, -1):
        p = ".".join(parts[:n])
        if p in defs and defs[p].get("type") not in ("object", "nested", "flattened"):
            return p
    return None


def leaves(doc: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """(dotted field name, value) for every leaf of a document; a list of objects is walked into,
    any other list is one leaf. Public: the corpus tests check documents field by field with it."""
    out: list[tuple[str, Any]] = []
    for k, v in doc.items():
        key = prefix + k
        if isinstance(v, dict):
            out += leaves(v, key + ".")
        elif isinstance(v, list) and v and all(isinstance(i, dict) for i in v):
            for item in v:
                out += leaves(item, key + ".")
        else:
            out.append((key, v))
    return out


def value_fits_type(ftype: str, value: Any) -> bool:
    """Whether a document value fits an Elasticsearch field type (None fits any)."""
    if value is None:
        return True
    if ftype in ("keyword", "constant_keyword", "wildcard", "match_only_text", "text"):
        return isinstance(value, str)
    if ftype in ("long", "integer", "short", "byte", "unsigned_long"):
        return isinstance(value, int) and not isinstance(value, bool)
    if ftype in ("float", "double", "scaled_float", "half_float"):
        return isinstance(value, int | float) and not isinstance(value, bool)
    if ftype == "boolean":
        return isinstance(value, bool)
    if ftype == "date":
        return isinstance(value, str) and bool(_DATE.match(value))
    if ftype == "ip":
        try:
            ipaddress.ip_address(value)
        except (ValueError, TypeError):
            return False
        return True
    return ftype == "flattened"


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not _DATE.match(value):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def collect_files(paths: Iterable[Path]) -> Iterable[tuple[Path, bool]]:
    """Scenario and task files under the paths: (file, named explicitly)."""
    for p in paths:
        if p.is_dir():
            for f in sorted(p.rglob("*")):
                if (
                    f.is_file()
                    and kind_of_path(f) is not None
                    and not any(part.startswith(".") for part in f.relative_to(p).parts)
                ):
                    yield f, False
        elif p.exists():
            yield p, True
        else:
            raise SoclabError(f"{p}: no such file or directory")


def _display(path: Path, root: Path | None) -> str:
    if root is not None:
        try:
            return path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            pass
    return str(path)


__all__ = ["Problem", "Validator", "collect_files", "doc_problems", "semantic_problems"]
