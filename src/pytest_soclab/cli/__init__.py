"""`soclab`: the command line. Each subcommand lives in its own module with a `register(subparsers)`."""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from pytest_soclab import __version__
from pytest_soclab.errors import EsError, SoclabError

# What a shell reports for a tool killed by SIGPIPE (128 + 13), as `soclab ... | head` ends.
EXIT_BROKEN_PIPE = 141

# Module name under pytest_soclab.cli -> its subcommands are registered in this order.
COMMAND_MODULES: tuple[str, ...] = (
    "corpus_cmd",
    "import_cmd",
    "load_cmd",
    "serve_cmd",
    "query_cmd",
    "mcp_cmd",
    "harvest_cmd",
    "pseudonymize_cmd",
    "validate_cmd",
    "compare_cmd",
    "merge_cmd",
    "rescore_cmd",
    "attack_cmd",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="soclab", description="pytest-soclab: benchmark SecOps investigation agents on Elasticsearch telemetry."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            mod = importlib.import_module(f"pytest_soclab.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"pytest_soclab.cli.{name}":  # not written yet
                continue
            raise
        mod.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        rc = int(args.func(args) or 0)
        sys.stdout.flush()  # here, not at exit: a closed pipe is then caught below
        return rc
    except BrokenPipeError:
        # The reader went away (`soclab compare ... | head`): stop quietly, as a SIGPIPE'd tool does.
        _drop_stdout()
        return EXIT_BROKEN_PIPE
    except SoclabError as exc:
        print(f"soclab: error: {exc}", file=sys.stderr)
        return 2
    except EsError as exc:
        print(f"soclab: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def _drop_stdout() -> None:
    """Point stdout at the null device, so that the interpreter's last flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # not a real file (a test's capture): nothing to flush
        pass


if __name__ == "__main__":
    sys.exit(main())
