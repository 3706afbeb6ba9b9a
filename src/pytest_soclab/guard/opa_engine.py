"""The `opa` binary as a guard engine, when one is on PATH.

Two ways to call it: `OpaServerGuard` starts one long-lived `opa run --server` on
loopback and POSTs each input to its Data API; `OpaEvalGuard` runs one `opa eval`
process per decision (simple, and slow: a process start per call). At load both
run `opa check` (compile errors with file and line) and `opa test` (the Rego unit
tests), so that a broken policy stops the session before the first item.
"""

from __future__ import annotations

import http.client
import json
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from pytest_soclab.errors import SoclabError
from pytest_soclab.guard.decision import TIMEOUT_RULE, denied, from_raw
from pytest_soclab.guard.policy import (
    DECISION_RULE,
    PolicyFile,
    PolicyTestResult,
    raise_on_failures,
    read_policy_dir,
)
from pytest_soclab.models import GuardDecision

_DATA_PATH = "/v1/data/" + DECISION_RULE.removeprefix("data.").replace(".", "/")
_STARTUP_S = 15.0


def find_opa() -> str:
    opa = shutil.which("opa")
    if not opa:
        raise SoclabError(
            "policy engine 'opa' needs the opa binary on PATH (none found); use the in-process engine 'regorus'"
        )
    return opa


# The two ways of calling opa fail closed alike: a timeout under its own rule id, anything else as an
# engine error; both timed from the decision's start (t0, perf_counter_ns).
def _timed_out(engine: str, what: str, timeout_ms: float, t0: int) -> GuardDecision:
    us = (time.perf_counter_ns() - t0) / 1000
    return denied(engine, f"{what} within the {timeout_ms:g} ms timeout", us, TIMEOUT_RULE)


def _failed(engine: str, exc: Exception, t0: int) -> GuardDecision:
    return denied(engine, f"{type(exc).__name__}: {exc}", (time.perf_counter_ns() - t0) / 1000)


class _Workspace:
    """Policy files (tests apart) and the data document as a file, for the opa command line."""

    def __init__(self, policy_dir: Path, data: dict[str, Any] | None):
        self.files: list[PolicyFile] = read_policy_dir(policy_dir)
        self._tmp = tempfile.TemporaryDirectory(prefix="soclab-opa-")
        self.data_file: Path | None = None
        if data:
            self.data_file = Path(self._tmp.name) / "data.json"
            self.data_file.write_text(json.dumps(data), encoding="utf-8")

    def paths(self, *, tests: bool, data: bool = True) -> list[str]:
        """tests: every policy file, else the policies without their tests; data: plus the data file."""
        chosen = [str(f.path) for f in self.files if tests or not f.is_test]
        return chosen + ([str(self.data_file)] if data and self.data_file else [])

    def cleanup(self) -> None:
        self._tmp.cleanup()


def _run(
    args: list[str], *, stdin: str | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(args, input=stdin, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise SoclabError(f"{' '.join(args[:2])} did not finish in {timeout:g} s") from None
    except OSError as exc:
        raise SoclabError(f"could not run {args[0]}: {exc}") from None


def _json_from(proc: subprocess.CompletedProcess[str]) -> Any:
    for text in (proc.stdout, proc.stderr):
        text = text.strip()
        if text:
            try:
                return json.loads(text)
            except json.JSONDecodeError:
                continue
    return None


def check_policies(opa: str, ws: _Workspace) -> None:
    """`opa check`: compile errors as SoclabError with file and line."""
    proc = _run([opa, "check", "--format", "json", *ws.paths(tests=True, data=False)])
    if proc.returncode == 0:
        return
    body = _json_from(proc)
    errors = body.get("errors", []) if isinstance(body, dict) else []
    lines = []
    for err in errors:
        loc = err.get("location") or {}
        lines.append(
            f"{loc.get('file', '?')}:{loc.get('row', '?')}:{loc.get('col', '?')}: {err.get('message', err)}"
        )
    detail = "\n".join(lines) or (proc.stderr or proc.stdout).strip()
    raise SoclabError(f"policy does not compile (opa check):\n{detail}")


def run_tests_opa(policy_dir: Path, *, data: dict[str, Any] | None = None) -> list[PolicyTestResult]:
    opa = find_opa()
    ws = _Workspace(policy_dir, data)
    try:
        check_policies(opa, ws)
        return _opa_test(opa, ws)
    finally:
        ws.cleanup()


def _opa_test(opa: str, ws: _Workspace, *, with_data: bool = True) -> list[PolicyTestResult]:
    proc = _run([opa, "test", "--format", "json", *ws.paths(tests=True, data=with_data)])
    body = _json_from(proc)
    if not isinstance(body, list):
        raise SoclabError(f"opa test gave no results: {(proc.stderr or proc.stdout).strip()[:500]}")
    results = []
    for r in body:
        loc = r.get("location") or {}
        error = r.get("error")
        if isinstance(error, dict):
            error = error.get("message", json.dumps(error))
        results.append(
            PolicyTestResult(
                file=str(loc.get("file", "?")),
                line=int(loc.get("row", 0)),
                package=str(r.get("package", "")).removeprefix("data."),
                name=str(r.get("name", "")),
                passed=not r.get("fail") and not error,
                error=str(error) if error else None,
                duration_us=float(r.get("duration", 0)) / 1000,
            )
        )
    return results


def _load(opa: str, ws: _Workspace) -> list[PolicyTestResult]:
    check_policies(opa, ws)
    # The shipped tests assume the default config, so they run on the policies alone
    # (as `opa test rego/` does), not on the deployment's data.
    results = _opa_test(opa, ws, with_data=False)
    raise_on_failures(results)
    return results


class OpaServerGuard:
    """A long-lived `opa run --server` on 127.0.0.1, asked over one keep-alive connection."""

    engine = "opa"

    def __init__(self, policy_dir: Path, *, timeout_ms: float = 250, data: dict[str, Any] | None = None):
        self.timeout_ms = timeout_ms
        opa = find_opa()
        self._ws = _Workspace(policy_dir, data)
        self._proc: subprocess.Popen[bytes] | None = None
        self._conn: http.client.HTTPConnection | None = None
        self._lock = threading.Lock()
        try:
            self.test_results = _load(opa, self._ws)
            self.port = _free_port()
            self._proc = subprocess.Popen(
                [
                    opa,
                    "run",
                    "--server",
                    "--addr",
                    f"127.0.0.1:{self.port}",
                    "--log-level",
                    "error",
                    *self._ws.paths(tests=False),
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            self._wait_ready()
        except BaseException:
            self.close()
            raise

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + _STARTUP_S
        while time.monotonic() < deadline:
            assert self._proc is not None
            if self._proc.poll() is not None:
                err = self._proc.stderr.read().decode(errors="replace") if self._proc.stderr else ""
                raise SoclabError(
                    f"opa run --server exited with code {self._proc.returncode}: {err.strip()[:500]}"
                )
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=1)
                conn.request("GET", "/health")
                if conn.getresponse().status == 200:
                    conn.close()
                    return
                conn.close()
            except OSError:
                pass
            time.sleep(0.05)
        raise SoclabError(f"opa run --server did not answer /health within {_STARTUP_S:g} s")

    def _connection(self) -> http.client.HTTPConnection:
        if self._conn is None:
            self._conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout_ms / 1000)
        return self._conn

    def decide(self, input: dict[str, Any]) -> GuardDecision:
        t0 = time.perf_counter_ns()
        try:
            payload = json.dumps({"input": input})
            with self._lock:
                conn = self._connection()
                try:
                    conn.request(
                        "POST", _DATA_PATH, body=payload, headers={"Content-Type": "application/json"}
                    )
                    resp = conn.getresponse()
                    text = resp.read().decode("utf-8")
                except BaseException:
                    # The connection is in an unknown state: drop it, deny this call.
                    conn.close()
                    self._conn = None
                    raise
            if resp.status != 200:
                raise RuntimeError(f"opa answered HTTP {resp.status}: {text[:300]}")
            body = json.loads(text)
        except TimeoutError:
            return _timed_out(self.engine, "no answer from opa", self.timeout_ms, t0)
        except Exception as exc:
            return _failed(self.engine, exc, t0)
        # No "result" key means the decision is undefined: from_raw denies.
        raw = body.get("result") if isinstance(body, dict) else None
        return from_raw(raw, self.engine, (time.perf_counter_ns() - t0) / 1000, self.timeout_ms)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        if self._proc is not None and self._proc.stderr:
            self._proc.stderr.close()
        self._proc = None
        self._ws.cleanup()


class OpaEvalGuard:
    """One `opa eval` process per decision."""

    engine = "opa-eval"

    def __init__(self, policy_dir: Path, *, timeout_ms: float = 250, data: dict[str, Any] | None = None):
        self.timeout_ms = timeout_ms
        self._opa = find_opa()
        self._ws = _Workspace(policy_dir, data)
        try:
            self.test_results = _load(self._opa, self._ws)
        except BaseException:
            self._ws.cleanup()
            raise
        self._args = [self._opa, "eval", "--format", "json", "--stdin-input"]
        for p in self._ws.paths(tests=False):
            self._args += ["--data", p]
        self._args.append(DECISION_RULE)

    def decide(self, input: dict[str, Any]) -> GuardDecision:
        t0 = time.perf_counter_ns()
        try:
            proc = subprocess.run(
                self._args,
                input=json.dumps(input),
                capture_output=True,
                text=True,
                timeout=self.timeout_ms / 1000,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return _timed_out(self.engine, "opa eval did not finish", self.timeout_ms, t0)
        except Exception as exc:
            return _failed(self.engine, exc, t0)
        us = (time.perf_counter_ns() - t0) / 1000
        if proc.returncode != 0:
            return denied(
                self.engine, f"opa eval exited {proc.returncode}: {proc.stderr.strip()[:300]}", us
            )
        try:
            body = json.loads(proc.stdout or "{}")
            results = body.get("result") or []
            raw = results[0]["expressions"][0]["value"] if results else None
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            return denied(
                self.engine, f"unreadable opa eval output ({exc}): {proc.stdout[:200]}", us
            )
        return from_raw(raw, self.engine, us, self.timeout_ms)

    def close(self) -> None:
        self._ws.cleanup()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
