"""`soclab pseudonymize PATHS... --out DIR --key-file K`: shareable copies of corpora, tasks, evidence, results."""

from __future__ import annotations

import argparse
from pathlib import Path

from pytest_soclab.pseudonymize import MANIFEST_NAME, pseudonymize_paths
from pytest_soclab.pseudonymize import KEY_ENV_VAR, load_key
from pytest_soclab.pseudonymize import Pseudonymizer


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    sp = subparsers.add_parser(
        "pseudonymize",
        help="pseudonymize corpora, task files, evidence.json, transcripts and results (keyed, deterministic)",
        description=(
            "Write pseudonymized copies of PATHS (files or directories) into --out, keeping every correlation: "
            "the same address, host, user or domain gets the same pseudonym in every file. All inputs are read "
            "once to learn their names before any is written, so give every file of a release in one run (or "
            "share what runs learned with --known). "
            f"The key comes from --key-file or the environment variable {KEY_ENV_VAR}; without one, nothing runs."
        ),
    )
    sp.add_argument(
        "paths", nargs="+", type=Path, metavar="PATH", help="files or directories to pseudonymize"
    )
    sp.add_argument("--out", required=True, type=Path, metavar="DIR", help="output directory (same layout)")
    sp.add_argument(
        "--key-file", type=Path, metavar="K", help=f"file holding the secret (else ${KEY_ENV_VAR})"
    )
    sp.add_argument(
        "--no-keep-special-ranges",
        dest="keep_special_ranges",
        action="store_false",
        help="plain Crypto-PAn: private, loopback, documentation... addresses are not kept in their ranges",
    )
    sp.add_argument(
        "--keep-domain",
        action="append",
        default=[],
        metavar="DOMAIN",
        help="a registrable domain to keep as is (repeatable), e.g. microsoft.com",
    )
    sp.add_argument(
        "--keep-user",
        action="append",
        default=[],
        metavar="NAME",
        help="an account name to keep as is (repeatable), besides the well-known system accounts",
    )
    sp.add_argument(
        "--drop-geo",
        action="store_true",
        help="remove *.geo and *.as objects (they describe the original addresses)",
    )
    sp.add_argument(
        "--known",
        type=Path,
        metavar="FILE",
        help="remember names across runs: read the names earlier runs learned from FILE (keyed "
        "digests, no names in clear) and write back everything known after this run",
    )
    sp.add_argument(
        "--skip-unsupported",
        action="store_true",
        help="leave files of unsupported types out of the output instead of failing",
    )
    sp.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    secret = load_key(args.key_file)  # refuses without a key
    p = Pseudonymizer(
        secret,
        keep_special_ranges=args.keep_special_ranges,
        keep_domains=args.keep_domain,
        keep_users=args.keep_user,
        drop_geo=args.drop_geo,
    )
    manifest = pseudonymize_paths(
        args.paths, args.out, p, skip_unsupported=args.skip_unsupported, known_file=args.known
    )
    records = sum(f.records for f in manifest.files)
    print(
        f"pseudonymized {len(manifest.files)} file(s), {records} record(s) into {args.out} "
        f"(key id {manifest.key_id}; {manifest.names_learned} names and {manifest.domains_learned} domains "
        f"learned); manifest: {args.out / MANIFEST_NAME}"
    )
    return 0
