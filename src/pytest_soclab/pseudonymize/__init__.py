"""Keyed, deterministic, correlation-preserving pseudonymization of corpora, tasks, evidence and results.

    from pytest_soclab.pseudonymize import Pseudonymizer, load_key
    p = Pseudonymizer(load_key("secret.key"))
    p.learn_documents(docs); p.learn_task(task)      # learn everything first
    new_docs = [p.document(d) for d in docs]; new_task = p.task(task)

Whole files and directories (corpora, tasks, evidence): `pseudonymize_paths` (files.py).

See docs/pseudonymize.md.
"""

from pytest_soclab.pseudonymize.files import MANIFEST_NAME, pseudonymize_paths
from pytest_soclab.pseudonymize.keys import KEY_ENV_VAR, MIN_KEY_BYTES, PseudonymKeyError, key_id, load_key
from pytest_soclab.pseudonymize.pseudonymizer import Pseudonymizer
from pytest_soclab.pseudonymize.variant import Variant, offset_days, variant_key

__all__ = [
    "KEY_ENV_VAR",
    "MANIFEST_NAME",
    "MIN_KEY_BYTES",
    "PseudonymKeyError",
    "Pseudonymizer",
    "Variant",
    "key_id",
    "load_key",
    "offset_days",
    "pseudonymize_paths",
    "variant_key",
]
