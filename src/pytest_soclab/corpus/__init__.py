"""Case recipes -> ECS documents: estate, background activity, attack chains, planted content.

    from pytest_soclab.corpus import generate, load_case
    for stream, doc_id, doc in generate(load_case(Path("corpus/case-01-recon")), seed=7): ...

Note: the function `generate` is the package's attribute of that name; its module is
imported by path (`from pytest_soclab.corpus.generate import expected_background`).
"""

from pytest_soclab.corpus.build import build_case, built_files
from pytest_soclab.corpus.docs import ALERTS, STREAMS, dataset_of
from pytest_soclab.corpus.estate import estate_from_recipe
from pytest_soclab.models.fields import field_definitions
from pytest_soclab.corpus.generate import generate
from pytest_soclab.corpus.planted import expand_planted
from pytest_soclab.corpus.recipe import CaseRecipe, find_case, list_cases, load_case

__all__ = [
    "ALERTS",
    "STREAMS",
    "CaseRecipe",
    "build_case",
    "built_files",
    "dataset_of",
    "estate_from_recipe",
    "expand_planted",
    "field_definitions",
    "find_case",
    "generate",
    "list_cases",
    "load_case",
]
