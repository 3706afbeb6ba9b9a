"""Loading a policy directory: its files, compile errors with file and line, and the
Rego unit tests (`test_*` rules), run with the in-process engine.

regorus reports some errors only when a rule runs (an unsafe variable, an unknown
function), so loading does three things: compile every file, check that every
function a policy calls exists, and run every `test_` rule. Any failure raises
`SoclabError` naming the file and line, so that a broken policy stops a session at
its start instead of denying every call of every item.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import regorus

from pytest_soclab.errors import SoclabError

PACKAGE = "soclab.guard"
DECISION_RULE = "data.soclab.guard.decision"
# Values that depend only on the item (config, scope, estate lookups): see rego/guard.rego.
ITEM_RULE = "data.soclab.guard.item_values"
# The kinds of `seen` the rules judging a read tool look at: the guard sends reads only these.
READ_SEEN_RULE = "data.soclab.guard.read_seen_kinds"
# The same per tool (tool -> kinds); policies that declare it get only those kinds for every tool.
TOOL_SEEN_RULE = "data.soclab.guard.seen_kinds_by_tool"

_LOCATION = re.compile(r"-->\s*(?P<file>.+?):(?P<line>\d+):(?P<col>\d+)")
_TEST_RULE = re.compile(r"^(?P<name>test_[A-Za-z0-9_]*)\b", re.MULTILINE)
_PACKAGE_LINE = re.compile(r"^\s*package\s+([A-Za-z0-9_.]+)", re.MULTILINE)


@dataclass(frozen=True)
class PolicyFile:
    path: Path
    source: str

    @property
    def is_test(self) -> bool:
        return self.path.name.endswith("_test.rego")

    @property
    def package(self) -> str:
        m = _PACKAGE_LINE.search(self.source)
        return m.group(1) if m else ""


@dataclass(frozen=True)
class PolicyTestResult:
    """One `test_` rule: passed, failed (false or undefined) or errored."""

    file: str
    line: int
    package: str
    name: str
    passed: bool
    error: str | None = None
    duration_us: float = 0.0

    def label(self) -> str:
        return f"{self.file}:{self.line}: data.{self.package}.{self.name}"


def read_policy_dir(policy_dir: Path) -> list[PolicyFile]:
    """Every `.rego` file under policy_dir, in a stable order."""
    policy_dir = Path(policy_dir)
    if not policy_dir.is_dir():
        raise SoclabError(f"policy directory {policy_dir} does not exist")
    files = [PolicyFile(p, _read_rego(p)) for p in sorted(policy_dir.rglob("*.rego"))]
    if not any(not f.is_test for f in files):
        raise SoclabError(f"{policy_dir}: no .rego policy files")
    if not any(f.package == PACKAGE for f in files if not f.is_test):
        raise SoclabError(f"{policy_dir}: no policy file declares `package {PACKAGE}`")
    return files


MAX_POLICY_BYTES = 4 * 1024 * 1024


def _read_rego(path: Path) -> str:
    """A policy file's text, or one clear error (the guard then fails closed at session start)."""
    try:
        if path.stat().st_size > MAX_POLICY_BYTES:
            raise SoclabError(f"{path}: larger than {MAX_POLICY_BYTES // (1024 * 1024)} MB: not a Rego policy")
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise SoclabError(f"{path}: not a text file (UTF-8): byte {exc.start} is invalid") from None
    except OSError as exc:
        raise SoclabError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if "\x00" in text:
        raise SoclabError(f"{path}: not a text file: it contains NUL bytes")
    return text


def clean_error(err: BaseException | str) -> str:
    """regorus's message without its Rust backtrace, on one line where it can be."""
    text = str(err).split("Stack backtrace:")[0].strip()
    m = _LOCATION.search(text)
    if not m:
        return " ".join(text.split())
    # "--> file:line:col / | / 12 | source / | ^ / error: message" -> "file:line:col: message | source"
    msg = next((ln.strip() for ln in reversed(text.splitlines()) if ln.strip().startswith("error:")), text)
    code = next(
        (ln.split("|", 1)[1].strip() for ln in text.splitlines() if re.match(rf"\s*{m['line']}\s*\|", ln)),
        "",
    )
    where = f"{m['file']}:{m['line']}:{m['col']}"
    return f"{where}: {msg.removeprefix('error:').strip()}" + (f"  [{code}]" if code else "")


def new_engine(files: list[PolicyFile], data: dict[str, Any] | None) -> regorus.Engine:
    """A regorus engine with the given files and data; compile errors -> SoclabError."""
    engine = regorus.Engine()
    for f in files:
        try:
            engine.add_policy(str(f.path), f.source)
        except Exception as exc:  # regorus raises RuntimeError/ValueError with file:line:col
            raise SoclabError(f"policy does not compile: {clean_error(exc)}") from None
    if data:
        try:
            engine.add_data(data)
        except Exception as exc:
            raise SoclabError(f"policy data rejected: {clean_error(exc)}") from None
    return engine


# ---- unknown functions --------------------------------------------------------------


def _ref_name(node: Any) -> str | None:
    """The dotted name of a call's function reference (Var / RefDot chains)."""
    if not isinstance(node, dict) or len(node) != 1:
        return None
    ((kind, body),) = node.items()
    if kind == "Var":
        return str(body["value"])
    if kind == "RefDot":
        base = _ref_name(body["refr"])
        return f"{base}.{body['field'][1]}" if base else None
    return None


def _calls(ast: Any, out: list[tuple[str, int, int]]) -> None:
    if isinstance(ast, dict):
        call = ast.get("Call")
        if isinstance(call, dict):
            name = _ref_name(call.get("fcn"))
            span = call.get("span", {})
            if name:
                out.append((name, int(span.get("line", 0)), int(span.get("col", 0))))
        for v in ast.values():
            _calls(v, out)
    elif isinstance(ast, list):
        for v in ast:
            _calls(v, out)


def _defined_functions(ast: Any, out: set[str]) -> None:
    if isinstance(ast, dict):
        head = ast.get("Func")
        if isinstance(head, dict):
            name = _ref_name(head.get("refr"))
            if name:
                out.add(name.split(".")[-1])
        for v in ast.values():
            _defined_functions(v, out)
    elif isinstance(ast, list):
        for v in ast:
            _defined_functions(v, out)


def _builtin_exists(name: str) -> bool:
    probe = regorus.Engine()
    probe.add_policy("probe.rego", f"package probe\nr := {name}(null)\n")
    try:
        probe.eval_rule("data.probe.r")
    except Exception as exc:  # arity or type errors mean the function exists
        return "could not find function" not in str(exc)
    return True


def check_functions(engine: regorus.Engine) -> None:
    """Every called function is defined by a policy or is an engine builtin."""
    modules = json.loads(engine.get_ast_as_json())
    defined: set[str] = set()
    for mod in modules:
        _defined_functions(mod.get("ast"), defined)
    for mod in modules:
        calls: list[tuple[str, int, int]] = []
        _calls(mod.get("ast"), calls)
        for name, line, col in calls:
            last = name.split(".")[-1]
            if (name.startswith("data.") or "." not in name) and last in defined:
                continue
            if not _builtin_exists(name):
                file = mod.get("source", {}).get("file", "?")
                raise SoclabError(
                    f"policy does not compile: {file}:{line}:{col}: unknown function {name}"
                    " (not a builtin of the regorus engine, nor defined by a policy)"
                )


# ---- tests ------------------------------------------------------------------------------


def test_rules(f: PolicyFile) -> list[tuple[str, int]]:
    """(name, line) of the `test_` rules of a file, each name once (OPA runs a name once)."""
    seen: dict[str, int] = {}
    for m in _TEST_RULE.finditer(f.source):
        seen.setdefault(m["name"], f.source.count("\n", 0, m.start()) + 1)
    return list(seen.items())


def run_tests_regorus(files: list[PolicyFile], data: dict[str, Any] | None) -> list[PolicyTestResult]:
    engine = new_engine(files, data)
    engine.set_input({})
    results: list[PolicyTestResult] = []
    for f in files:
        for name, line in test_rules(f):
            t0 = time.perf_counter_ns()
            try:
                value = engine.eval_rule(f"data.{f.package}.{name}")
                passed, error = value is True, None
            except Exception as exc:
                passed, error = False, clean_error(exc)
            results.append(
                PolicyTestResult(
                    file=str(f.path),
                    line=line,
                    package=f.package,
                    name=name,
                    passed=passed,
                    error=error,
                    duration_us=(time.perf_counter_ns() - t0) / 1000,
                )
            )
    return results


def raise_on_failures(results: list[PolicyTestResult]) -> None:
    bad = [r for r in results if not r.passed]
    if bad:
        lines = [f"  {r.label()}: {'ERROR ' + r.error if r.error else 'FAIL'}" for r in bad]
        raise SoclabError(f"{len(bad)} of {len(results)} policy tests failed:\n" + "\n".join(lines))


# A call every policy must be able to decide without an error (a smoke test of the
# deployment's data: a config value of the wrong type shows up here, not per item).
SMOKE_INPUT: dict[str, Any] = {
    "tool": "es_search",
    "args": {"index": "logs-*", "body": {"size": 10, "query": {"range": {"@timestamp": {"gte": "now-1d"}}}}},
    "mode": "protected",
    "scenario": {
        "id": "SMOKE",
        "kind": "task",
        "allowed_tools": ["es_search"],
        "scope": {
            "indices": ["logs-*"],
            "time_range": {"gte": "2026-03-02T00:00:00Z", "lte": "2026-03-04T00:00:00Z"},
            "allowed_domains": [],
        },
    },
    "assets": {},
    "tooling": {},
    "seen": {},
    "history": {"calls": 0, "read_calls": 0, "rows_returned": 0, "denied": 0},
}


def check_config(engine: regorus.Engine, data: dict[str, Any] | None) -> None:
    """data.soclab.config may only override known settings, each with the default's type."""
    override = ((data or {}).get("soclab") or {}).get("config") or {}
    if not isinstance(override, dict):
        raise SoclabError("data.soclab.config must be an object")
    try:
        defaults = engine.eval_rule("data.soclab.guard.default_config") or {}
    except Exception:
        defaults = {}
    for key, value in override.items():
        if key not in defaults:
            raise SoclabError(
                f"data.soclab.config.{key}: unknown setting; known: {', '.join(sorted(defaults))}"
            )
        want = defaults[key]
        number = (int, float)
        ok = (
            isinstance(value, bool)
            if isinstance(want, bool)
            else isinstance(value, number) and not isinstance(value, bool)
            if isinstance(want, number)
            else isinstance(value, type(want))
        )
        if not ok:
            raise SoclabError(
                f"data.soclab.config.{key}: expected {type(want).__name__} like {want!r}, got {value!r}"
            )


def load_checked(
    policy_dir: Path, data: dict[str, Any] | None, *, self_test: bool = True
) -> tuple[list[PolicyFile], list[PolicyTestResult]]:
    """Read, compile, check functions, run the tests (on the policies alone, as `opa test`
    does) and decide one smoke input with the deployment's data; SoclabError on any failure.
    Without self_test the tests are not run (a process that already ran them passed them on)."""
    files = read_policy_dir(policy_dir)
    results: list[PolicyTestResult] = []
    if self_test:
        engine = new_engine(files, None)
        check_functions(engine)
        results = run_tests_regorus(files, None)
        raise_on_failures(results)
    deployed = new_engine([f for f in files if not f.is_test], data)
    check_config(deployed, data)
    deployed.set_input(SMOKE_INPUT)
    try:
        raw = deployed.eval_rule(DECISION_RULE)
    except Exception as exc:
        raise SoclabError(f"the policies fail on a plain search with this data: {clean_error(exc)}") from None
    from pytest_soclab.guard.decision import from_raw

    smoke = from_raw(raw, "regorus", 0.0, float("inf"), True)
    if smoke.error:
        raise SoclabError(f"{DECISION_RULE} on a plain search: {smoke.error}")
    return files, results
