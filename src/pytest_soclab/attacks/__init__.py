"""Composed attacks: injection style x carrier x case x objective, their benign counterparts, and the
adaptive search for what a guard lets through."""

from pytest_soclab.attacks.bases import Base, load_bases
from pytest_soclab.attacks.carriers import CARRIERS, Carrier
from pytest_soclab.attacks.compose import COMPOSED_TAG, PARTS, Composition, compose, parts_of, sample
from pytest_soclab.attacks.objectives import OBJECTIVES, Objective
from pytest_soclab.attacks.styles import STYLES, Style

__all__ = [
    "Base",
    "CARRIERS",
    "COMPOSED_TAG",
    "Carrier",
    "Composition",
    "OBJECTIVES",
    "Objective",
    "PARTS",
    "STYLES",
    "Style",
    "compose",
    "load_bases",
    "parts_of",
    "sample",
]
