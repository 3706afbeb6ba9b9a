"""The one place that names the modes an item runs in."""

from __future__ import annotations

from typing import Literal, get_args

Mode = Literal["baseline", "protected"]
MODES: tuple[Mode, ...] = get_args(Mode)
BOTH = "both"  # a choice of the command line, never an item's mode


def modes_of(choice: str) -> tuple[Mode, ...]:
    """`baseline`, `protected` or `both` -> the modes to run; ValueError otherwise."""
    if choice == BOTH:
        return MODES
    if choice in MODES:
        return (choice,)  # type: ignore[return-value]
    raise ValueError(f"mode must be {', '.join(MODES)} or {BOTH}, not {choice!r}")


def enforces(mode: Mode) -> bool:
    """Whether the guard's decisions are enforced (protected) or only recorded (baseline)."""
    return mode == "protected"
