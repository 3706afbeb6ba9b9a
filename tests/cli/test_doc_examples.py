"""Every `pytest` and `soclab` command in README.md and docs/ (fenced sh, bash, console and
shell blocks) runs as written, or, where it needs a cluster, a model, a server that never
returns or minutes of work, in its dry form.

EXAMPLES below says, for each command, how it is checked and why. A command that is not in
the table fails `test_every_example_is_in_the_table`: add it, with its treatment.

Treatments:
- run:     run as written (`soclab` on PATH) in a scratch copy of the project.
- small:   run as written plus `--scale 0.05 --cache-dir <the tests' case cache>` (and `--case`
           when the docs say to add one outside an item): the same work on a small case.
- collect: the pytest command with `--collect-only -q` in the repository (the run takes minutes).
- options: pytest's option names checked against `pytest --help` (the agent is a placeholder or
           needs a model, a package or a cluster that a test machine does not have).
- parse:   `soclab`'s own parser accepts the arguments; nothing runs.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_soclab.cli import build_parser

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
SHELL_BLOCK = re.compile(r"^```(sh|bash|console|shell)\n(.*?)^```", re.M | re.S)
COMMAND = re.compile(r"^(?:\$ )?(?:[A-Z_]+=\S* )*(?:pip install .*&& )?(?:pytest|soclab)\b")
SMALL = ["--scale", "0.05"]
CASE = ["--case", "case-02-web-implant"]

CLUSTER = "needs an Elasticsearch cluster"
MODEL = "needs a model's API"
SERVER = "serves until stopped"
LONG = "takes minutes (the whole benchmark, or a case at scale 10)"
PLACEHOLDER = "names files or agents that only stand for yours"
ALIASES = {"--junitxml": "--junit-xml"}  # pytest's help shows one spelling of these

EXAMPLES: dict[str, tuple[str, str]] = {
    # README.md
    "pytest --soclab-mode=protected": ("collect", LONG),
    "pytest tests": ("options", "the plugin's own tests, of which this test is one"),
    "pytest --soclab-mode=both": ("collect", LONG),
    "pytest --soclab-mode=both --soclab-agent=gullible": ("collect", LONG),
    "pytest -n auto --count=2": ("options", LONG),
    "pytest --soclab-agent=my_agent:investigate": ("options", PLACEHOLDER),
    "pytest --soclab-agent=cmd:python my_agent.py": ("options", PLACEHOLDER),
    "pytest --soclab-agent=mcp:npx my-mcp-agent": ("options", PLACEHOLDER),
    "pytest --soclab-agent=openai:gpt-4.1 --soclab-judge=both:llm:openai:gpt-4.1": ("options", MODEL),
    "pytest -k T1003 -m soclab_family(name='exfiltration')": ("collect", LONG),
    "pytest --html=report.html --self-contained-html --junitxml=junit.xml --soclab-json=results.json": (
        "options", LONG),
    "pytest --soclab-es-url=https://es.example:9200": ("options", CLUSTER),
    "pytest --soclab-enforce-gates=L2": ("options", LONG),
    "soclab corpus build case-02-web-implant --scale 10": ("parse", LONG),
    "soclab serve --case case-02-web-implant": ("parse", SERVER),
    "soclab mcp --case case-02-web-implant": ("parse", SERVER),
    "soclab query esql FROM logs-* | STATS n = COUNT(*) BY host.name --case case-02-web-implant": ("small", ""),
    "soclab load case-02-web-implant --es-url https://es.example:9200": ("parse", CLUSTER),
    "soclab validate scenarios benign tasks": ("run", ""),
    "soclab compare main.json branch.json --markdown": ("parse", PLACEHOLDER),
    "soclab pseudonymize tasks corpus --out shared/ --key-file team.key --skip-unsupported": ("run", ""),
    "soclab harvest tasks/task-03.json --es-url ...": ("parse", CLUSTER),
    # docs/agent-skill.md: inside an item the command knows its endpoint; outside, add --case.
    "soclab query indices logs-*": ("small", "with --case"),
    "soclab query mappings logs-endpoint.events.process-default": ("small", "with --case"),
    "soclab query esql FROM logs-endpoint.events.process-default\n  | WHERE host.name == \"web-01\" AND "
    "process.executable LIKE \"/tmp/*\"\n  | KEEP @timestamp, process.pid, process.command_line, "
    "process.parent.name, user.name\n  | SORT @timestamp | LIMIT 50": ("small", "with --case"),
    "soclab query search logs-zeek.dns-default --body "
    '{"size": 20, "query": {"term": {"source.ip": "10.20.1.11"}}}': ("small", "with --case"),
    'soclab query call isolate_host --args {"host": "web-01", "comment": "implant beaconing to C2"}': (
        "parse", "an action: meant for an item's simulator"),
    'soclab query call submit_report --args {"markdown": "...", "findings": {...}}': ("parse", PLACEHOLDER),
    # docs/ci.md, docs/reference-agents.md
    "pytest tasks --soclab-agent=playbook --soclab-mode=protected": ("collect", LONG),
    # docs/pseudonymize.md
    "soclab pseudonymize corpus/case-01-recon tasks/task-01.json runs/ --out shared/ --key-file pseudo.key": (
        "parse", PLACEHOLDER),
    "soclab pseudonymize corpus/ tasks/ --out shared/ --key-file pseudo.key --known pseudo.known": (
        "parse", PLACEHOLDER),
    "soclab pseudonymize runs/2024-06-01/ --out shared-runs/ --key-file pseudo.key --known pseudo.known": (
        "parse", PLACEHOLDER),
    "soclab harvest tasks/task-01.json --es-url https://es.example.net:9200": ("parse", CLUSTER),
}


def _commands(text: str) -> list[tuple[str, list[str]]]:
    """(shell block, argv) of each pytest/soclab command; a command may span lines (an open quote)."""
    out: list[tuple[str, list[str]]] = []
    for block in SHELL_BLOCK.finditer(text):
        lines = block.group(2).splitlines()
        i = 0
        while i < len(lines):
            line = lines[i]
            i += 1
            if not COMMAND.match(line.strip()):
                continue
            cmd = line.strip().removeprefix("$ ")
            while True:
                try:
                    argv = shlex.split(cmd, comments=True)
                    break
                except ValueError:  # an unclosed quote: the command goes on
                    cmd += "\n" + lines[i]
                    i += 1
            if "&&" in argv:
                argv = argv[len(argv) - argv[::-1].index("&&"):]
            while argv and re.match(r"^[A-Z_]+=", argv[0]):
                argv = argv[1:]
            out.append((block.group(2), argv))
    return out


def _examples() -> list[tuple[str, str, list[str]]]:
    found = []
    for doc in DOCS:
        for block, argv in _commands(doc.read_text(encoding="utf-8")):
            found.append((doc.name, block, argv))
    return found


ALL = _examples()


def _key(argv: list[str]) -> str:
    return " ".join(argv)


def _ids(treatment: str) -> list[tuple[str, str, list[str]]]:
    return [e for e in ALL if EXAMPLES.get(_key(e[2]), ("?",))[0] == treatment]


def test_every_example_is_in_the_table() -> None:
    missing = sorted({f"{doc}: {_key(argv)!r}" for doc, _, argv in ALL if _key(argv) not in EXAMPLES})
    assert not missing, "examples without a treatment in EXAMPLES:\n" + "\n".join(missing)
    assert len(ALL) >= 30  # the extraction still finds the docs' examples


@pytest.fixture(scope="module")
def soclab_on_path(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """An environment whose PATH has a `soclab` running this interpreter (an installed one may be elsewhere)."""
    bin_dir = tmp_path_factory.mktemp("bin")
    shim = bin_dir / "soclab"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -c "import sys; from pytest_soclab.cli import main; '
                    f'sys.exit(main())" "$@"\n')  # fmt: skip
    shim.chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), env.get("PYTHONPATH", "")])
    return env


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the project's files that examples read (they may write next to them)."""
    root = tmp_path_factory.mktemp("project")
    for name in ("tasks", "scenarios", "benign", "corpus", "rego"):
        shutil.copytree(REPO / name, root / name)
    return root


def _shell(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", "-c", shlex.join(argv)], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600, check=False)  # fmt: skip


@pytest.mark.parametrize(("doc", "block", "argv"), _ids("run"), ids=lambda v: v if isinstance(v, str) and " " not in v else None)
def test_run(doc: str, block: str, argv: list[str], scratch: Path, soclab_on_path: dict[str, str]) -> None:
    # The block's other lines (a key made with `head -c 32 /dev/urandom ...`) run first, as a reader would.
    for line in block.splitlines():
        if line.strip() and not COMMAND.match(line.strip()) and not line.lstrip().startswith("#"):
            subprocess.run(["sh", "-c", line], cwd=scratch, check=True, timeout=60)
    done = _shell(argv, scratch, soclab_on_path)
    assert done.returncode == 0, f"{doc}: {_key(argv)}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"


@pytest.mark.parametrize(("doc", "block", "argv"), _ids("small"), ids=lambda v: v if isinstance(v, str) and " " not in v else None)
def test_small(doc: str, block: str, argv: list[str], soclab_cache: Path, soclab_on_path: dict[str, str]) -> None:
    extra = [*SMALL, "--cache-dir", str(soclab_cache), "--corpus-dir", str(REPO / "corpus"),
             "--policy-dir", str(REPO / "rego")]  # fmt: skip
    if "--case" not in argv:
        extra += CASE
    done = _shell([*argv, *extra], REPO, soclab_on_path)
    assert done.returncode == 0, f"{doc}: {_key(argv)}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"


@pytest.mark.parametrize(("doc", "block", "argv"), _ids("collect"), ids=lambda v: v if isinstance(v, str) and " " not in v else None)
def test_collect(doc: str, block: str, argv: list[str], soclab_on_path: dict[str, str]) -> None:
    assert argv[0] == "pytest"
    cmd = [sys.executable, "-m", *argv, "--collect-only", "-q", "-p", "no:cacheprovider"]
    done = subprocess.run(cmd, cwd=REPO, env=soclab_on_path, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, f"{doc}: {_key(argv)}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    assert re.search(r"\b[1-9]\d* tests? collected", done.stdout), done.stdout[-1000:]  # it selects something


@pytest.fixture(scope="module")
def pytest_options(soclab_on_path: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-m", "pytest", "--help", "-p", "no:cacheprovider"], cwd=REPO,
                          env=soclab_on_path, capture_output=True, text=True, timeout=300, check=True)  # fmt: skip
    return done.stdout


@pytest.mark.parametrize(("doc", "block", "argv"), _ids("options"), ids=lambda v: v if isinstance(v, str) and " " not in v else None)
def test_options(doc: str, block: str, argv: list[str], pytest_options: str) -> None:
    for arg in argv[1:]:
        if arg.startswith("--"):
            name = ALIASES.get(arg.split("=", 1)[0], arg.split("=", 1)[0])
            assert re.search(rf"(^|[\s,]){re.escape(name)}\b", pytest_options, re.M), f"{doc}: unknown option {name}"


@pytest.mark.parametrize(("doc", "block", "argv"), _ids("parse"), ids=lambda v: v if isinstance(v, str) and " " not in v else None)
def test_parse(doc: str, block: str, argv: list[str]) -> None:
    assert argv[0] == "soclab"
    args = build_parser().parse_args(argv[1:])  # exits (fails the test) on an unknown option or value
    assert getattr(args, "func", None) is not None
