"""Case recipes -> ECS documents: estate, background activity, attack chains, planted content.

    from pytest_soclab.corpus import generate, load_case
    for stream, doc_id, doc in generate(load_case(Path("corpus/case-01-recon")), seed=7): ...

Names load on first use (`pytest_soclab.faces`): the generator and its recipe models cost
a few hundred milliseconds that a store lookup or `soclab validate` need not pay. The
function `generate` is the face's name; its module is imported by path
(`from pytest_soclab.corpus.generate import expected_background`).
"""

from pytest_soclab.faces import lazy_face

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "ALERTS": "pytest_soclab.corpus.docs",
        "STREAMS": "pytest_soclab.corpus.docs",
        "CaseRecipe": "pytest_soclab.corpus.recipe",
        "build_case": "pytest_soclab.corpus.build",
        "built_files": "pytest_soclab.corpus.build",
        "dataset_of": "pytest_soclab.corpus.docs",
        "estate_from_recipe": "pytest_soclab.corpus.estate",
        "expand_planted": "pytest_soclab.corpus.planted",
        "find_case": "pytest_soclab.corpus.recipe",
        "generate": "pytest_soclab.corpus.generate",
        "list_cases": "pytest_soclab.corpus.recipe",
        "load_case": "pytest_soclab.corpus.recipe",
        "RecordedCase": "pytest_soclab.corpus.recorded",
        "is_recorded": "pytest_soclab.corpus.recorded",
        "load_recorded": "pytest_soclab.corpus.recorded",
        "with_overrides": "pytest_soclab.corpus.recorded",
        "recorded_docs": "pytest_soclab.corpus.recorded_build",
    },
)

__all__ = [
    "ALERTS",
    "RecordedCase",
    "STREAMS",
    "CaseRecipe",
    "build_case",
    "built_files",
    "dataset_of",
    "estate_from_recipe",
    "expand_planted",
    "find_case",
    "generate",
    "is_recorded",
    "list_cases",
    "load_case",
    "load_recorded",
    "recorded_docs",
    "with_overrides",
]
