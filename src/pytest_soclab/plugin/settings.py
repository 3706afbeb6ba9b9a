"""The run's settings, from command-line options, ini keys and defaults (in that order)."""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pytest_soclab import __version__
from pytest_soclab.models import BOTH, MODES, Mode, modes_of, project_or_packaged
from pytest_soclab.models import RunInfo, Suite
from pytest_soclab.errors import SoclabError
from pytest_soclab.run import run_fingerprints
from pytest_soclab.store import EsConnection
from pytest_soclab.store.connection import resolve as resolve_es


# name -> (default, help, type). Each option is --soclab-<name with dashes>, each ini key soclab_<name>.
OPTIONS: dict[str, tuple[Any, str, type]] = {
    "mode": ("protected", "baseline (no guard), protected (every tool call passes the Rego guard) or both", str),
    "agent": (
        "playbook",
        "the agent under test: playbook, gullible, module:attr, cmd:COMMAND, mcp:COMMAND, openai:MODEL, anthropic:MODEL",
        str,
    ),
    "judge": ("rules", "the task judge: rules, llm:openai:MODEL, llm:anthropic:MODEL, or both:llm:...", str),
    "suite": ("", "suite file (families, gates, levels); default: soclab.yaml in the rootdir if present", str),
    "json": ("", "write the results file (versioned JSON) to this path", str),
    "timeout": (120.0, "seconds an agent may spend on one item", float),
    "query_timeout": (30.0, "seconds one read tool call's store work may run; past it the call fails with task_cancelled_exception", float),
    "max_tool_calls": (200, "tool-call budget per item (a scenario may set a lower one)", int),
    "es_url": ("", "read a live Elasticsearch cluster instead of the embedded store (or ELASTIC_URL; read-only)", str),
    "es_api_key": ("", "API key for --soclab-es-url (or ELASTIC_API_KEY)", str),
    "es_username": ("", "user for basic auth (or ELASTIC_USERNAME)", str),
    "es_password": ("", "password for basic auth (or ELASTIC_PASSWORD)", str),
    "es_ca_certs": ("", "CA certificate file (or ELASTIC_CA_CERTS)", str),
    "es_verify_certs": ("true", "verify the cluster's TLS certificate (true/false)", str),
    "policy_dir": (
        "", "directory of the Rego policies; default: rego/ in the rootdir if present, else the packaged ones", str
    ),
    "policy_engine": ("regorus", "Rego engine: regorus (in-process) or opa (the opa binary on PATH)", str),
    "policy_timeout_ms": (250.0, "a guard decision slower than this denies (fail closed)", float),
    "corpus_dir": (
        "", "directory of the case recipes; default: corpus/ in the rootdir if present, else the packaged ones", str
    ),
    "cache_dir": (".soclab-cache", "where built cases are cached (keyed by content hash)", str),
    "scale": (1.0, "background activity scale of generated cases", float),
    "seed": ("", "override the cases' generation seed", str),
    "variant": (0, "run every case and its tasks as variant K: entities re-keyed, dates shifted (0: as is)", int),
    "llm_base_url": ("", "base URL of an OpenAI-compatible or Anthropic endpoint for LLM agents and judges", str),
    "llm_api_key": ("", "API key for LLM agents and judges (else the provider's usual variable)", str),
    "concurrency": (1, "how many items' agents may run at once in this process (and per xdist worker)", int),
    "otel": ("", "write the agents' spans (OpenTelemetry GenAI conventions) to this OTLP JSON file", str),
    "resume": ("", "carry the complete items of this previous results file (same fingerprints) instead of running them", str),
}


def option_name(name: str) -> str:
    return "--soclab-" + name.replace("_", "-")


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("soclab", "pytest-soclab: SecOps agent benchmark")
    for name, (default, help_, typ) in OPTIONS.items():
        kwargs: dict[str, Any] = {"dest": f"soclab_{name}", "default": None, "help": f"{help_} (default: {default!r})"}
        if name == "mode":
            kwargs["choices"] = (*MODES, BOTH)
        elif typ in (int, float):
            kwargs["type"] = typ
        group.addoption(option_name(name), **kwargs)
        parser.addini(f"soclab_{name}", help_, default=str(default) if default != "" else None)
    group.addoption(
        "--soclab-enforce-gates",
        dest="soclab_enforce_gates",
        nargs="?",
        const="all",
        default=None,
        metavar="LEVEL",
        help="let gates decide the exit status: without a value every gate must pass; with a level id "
        "(e.g. L2) that level must be reached. Both need the false-block rate under its ceiling.",
    )
    parser.addini("soclab_enforce_gates", "enforce gates: all, or a level id (e.g. L2)", default=None)
    group.addoption(
        "--soclab-isolate", dest="soclab_isolate", action="store_true", default=None,
        help="run in-process agents in a worker process: os._exit, a segfault or a CPU spin ends that item "
        "only, and a timeout kills the agent's work (cmd: and mcp: agents are separate processes anyway)",
    )  # fmt: skip
    parser.addini("soclab_isolate", "run in-process agents in a worker process (true/false)", default="false")


@dataclass(frozen=True)
class Settings:
    rootdir: Path
    modes: tuple[Mode, ...]
    agent: str
    judge: str
    suite_path: Path | None
    json_path: Path | None
    timeout: float
    max_tool_calls: int
    es: EsConnection | None  # None: the embedded store
    policy_dir: Path
    policy_engine: str
    policy_timeout_ms: float
    corpus_dir: Path
    cache_dir: Path
    scale: float
    seed: int | None
    enforce_gates: str | None  # None, "all", or a level id
    variant: int = 0  # --soclab-variant
    llm: dict[str, str] = field(default_factory=dict)
    resume_path: Path | None = None  # --soclab-resume
    concurrency: int = 1  # --soclab-concurrency
    otel_path: Path | None = None  # --soclab-otel
    isolate: bool = False  # in-process agents in a worker process
    query_timeout: float = 30.0  # --soclab-query-timeout

    @property
    def live(self) -> bool:
        return self.es is not None


def _get(config: pytest.Config, name: str) -> Any:
    value = config.getoption(f"soclab_{name}")
    if value is not None:
        return value
    ini = config.getini(f"soclab_{name}")
    if ini not in (None, ""):
        return ini
    return OPTIONS[name][0]


def _path(root: Path, value: str) -> Path:
    p = Path(os.path.expanduser(value))
    return p if p.is_absolute() else root / p


def _dir(config: pytest.Config, root: Path, name: str, default: str) -> Path:
    """A directory option: given (relative to the rootdir), it must exist; not given, the project's
    own `<rootdir>/<default>/` or else the copy that ships with the package."""
    value = str(_get(config, name))
    if not value:
        return project_or_packaged(root, default)
    path = _path(root, value)
    if not path.is_dir():
        raise pytest.UsageError(
            f"{option_name(name)}: no such directory: {path} (hint: relative paths start at the rootdir "
            f"{root}; leave it unset for the packaged {default}/)"
        )
    return path


def from_config(config: pytest.Config) -> Settings:
    root = Path(config.rootpath)
    mode = str(_get(config, "mode"))
    try:
        modes = modes_of(mode)
    except ValueError as exc:
        raise pytest.UsageError(f"--soclab-{exc}") from None
    suite = str(_get(config, "suite"))
    suite_path = _path(root, suite) if suite else (root / "soclab.yaml" if (root / "soclab.yaml").is_file() else None)
    if suite_path is not None and not suite_path.is_file():
        raise pytest.UsageError(f"--soclab-suite: no such file: {suite_path}")
    json_path = str(_get(config, "json"))
    seed = str(_get(config, "seed"))
    try:
        timeout = float(_get(config, "timeout"))
        query_timeout = float(_get(config, "query_timeout"))
        max_calls = int(_get(config, "max_tool_calls"))
        scale = float(_get(config, "scale"))
        policy_timeout = float(_get(config, "policy_timeout_ms"))
        seed_value = int(seed) if seed else None
        concurrency = int(_get(config, "concurrency"))
        variant = int(_get(config, "variant"))
    except ValueError as exc:
        raise pytest.UsageError(f"soclab: bad numeric option: {exc}") from None
    if concurrency < 1:
        raise pytest.UsageError(f"--soclab-concurrency must be >= 1, got {concurrency}")
    if variant < 0:
        raise pytest.UsageError("soclab: --soclab-variant must be >= 0")
    if timeout <= 0 or max_calls <= 0 or scale <= 0 or query_timeout <= 0:
        raise pytest.UsageError(
            "soclab: --soclab-timeout, --soclab-query-timeout, --soclab-max-tool-calls and --soclab-scale must be > 0"
        )
    enforce = config.getoption("soclab_enforce_gates") or config.getini("soclab_enforce_gates") or None
    try:  # no URL in the options nor in ELASTIC_URL: the embedded store
        es = resolve_es(
            url=str(_get(config, "es_url")), api_key=str(_get(config, "es_api_key")),
            username=str(_get(config, "es_username")), password=str(_get(config, "es_password")),
            ca_certs=str(_get(config, "es_ca_certs")),
            verify_certs=str(_get(config, "es_verify_certs")).lower() not in ("false", "0", "no"),
        )  # fmt: skip
    except SoclabError as exc:
        raise pytest.UsageError(f"soclab: {exc}") from None
    return Settings(
        rootdir=root,
        modes=modes,
        agent=str(_get(config, "agent")),
        judge=str(_get(config, "judge")),
        suite_path=suite_path,
        json_path=_path(root, json_path) if json_path else None,
        timeout=timeout,
        max_tool_calls=max_calls,
        es=es,
        policy_dir=_dir(config, root, "policy_dir", "rego"),
        policy_engine=str(_get(config, "policy_engine")),
        policy_timeout_ms=policy_timeout,
        corpus_dir=_dir(config, root, "corpus_dir", "corpus"),
        cache_dir=_path(root, str(_get(config, "cache_dir"))),
        scale=scale,
        seed=seed_value,
        enforce_gates=str(enforce) if enforce else None,
        variant=variant,
        llm={"base_url": str(_get(config, "llm_base_url")), "api_key": str(_get(config, "llm_api_key"))},
        concurrency=concurrency,
        otel_path=_path(root, str(_get(config, "otel"))) if str(_get(config, "otel")) else None,
        resume_path=_path(root, str(_get(config, "resume"))) if str(_get(config, "resume")) else None,
        query_timeout=query_timeout,
        isolate=bool(config.getoption("soclab_isolate")) or str(config.getini("soclab_isolate")).lower() == "true",
    )


def run_info(settings: Settings, repeats: int, suite: Suite | None = None) -> RunInfo:
    """What the results file records of this run's settings (with `suite`: its fingerprints too)."""
    extra: dict[str, Any] = {}
    if suite is not None:
        extra = {
            "fingerprints": run_fingerprints(suite, settings.corpus_dir, settings.policy_dir, settings.agent),
            "suite_config": suite.model_dump(mode="json"),
        }
    return RunInfo(
        agent=settings.agent,
        judge=settings.judge,
        modes=list(settings.modes),
        repeats=repeats,
        backend="live" if settings.live else "embedded",
        suite=str(settings.suite_path.name) if settings.suite_path else "defaults",
        soclab_version=__version__,
        pytest_version=pytest.__version__,
        python=platform.python_version(),
        scale=settings.scale,
        seed=settings.seed,
        **extra,
        variant=settings.variant,
    )
