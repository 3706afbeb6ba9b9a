"""`soclab`: the command line. Each subcommand lives in its own module with a `register(subparsers)`."""

from __future__ import annotations

import argparse
import importlib
import sys

from pytest_soclab.errors import EsError, SoclabError

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
    "attack_cmd",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="soclab", description="pytest-soclab: benchmark SecOps investigation agents on Elasticsearch telemetry."
    )
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
        return int(args.func(args) or 0)
    except SoclabError as exc:
        print(f"soclab: error: {exc}", file=sys.stderr)
        return 2
    except EsError as exc:
        print(f"soclab: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
