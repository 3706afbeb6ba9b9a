"""Per-shape compiled walkers: the speed of pseudonymizing a corpus.

Documents of one sensor have one shape: the same keys, in the same order, at each level.
Once a shape (the key tuple of an object at a given field) has been seen a few times, a
small function is generated for it that touches only the keys that need work (kept fields,
about half of them, cost nothing) with no per-key kind lookup. Shapes never seen before, and
anything unusual inside a known shape, go through the generic walker, which gives the same
result (tests/pseudonymize/test_pseudo_shapes.py compares them).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pytest_soclab.pseudonymize.kinds import DROP, IP, KEEP, TEXT, Node, copy_json

COMPILE_AFTER = 2  # sightings of a shape before it is compiled
MAX_PLANS_PER_FIELD = 64  # past that, a field's shapes vary too much to be worth compiling


MAX_INLINE_DEPTH = 4  # nested objects of the sample shape handled inline, without a call


@dataclass(frozen=True, slots=True)
class PlanHooks:
    """What compiled plans call back into: the walker's memoized lookups and typed transformation,
    its learning state, and its generic walkers for objects and lists of other shapes."""

    drop_geo: bool
    memo_get: Callable[[str], str | None]
    compute: Callable[[str], str]
    ip_get: Callable[[str], str | None]
    typed: Callable[[int, str], str]
    learn_new: Callable[[int, str], None]
    seen: list[set[str]]  # per kind, the values learned (never replaced: plans bind them)
    marks: list[list[Any]]  # per transform kind, the leaves noted by learn_marking
    copy_dict: Callable[[dict[str, Any], Node], dict[str, Any]]
    copy_list: Callable[[list[Any], Node], list[Any]]
    in_place_dict: Callable[[dict[str, Any], Node], None]
    in_place_list: Callable[[list[Any], Node, set[int] | None], None]
    learn_dict: Callable[[dict[str, Any], Node], None]
    learn_list: Callable[[list[Any], Node], None]
    mark_dict: Callable[[dict[str, Any], Node], None]
    mark_list: Callable[[list[Any], Node], None]


Plan = Callable[[dict[str, Any]], Any]
# compile_*(hooks, node, keys, sample): the plan for objects with those keys at that node.
Compiler = Callable[[PlanHooks, Node, tuple[str, ...], dict[str, Any]], Plan]


# The emitters: each returns the statements for the keys of one object, indented by `ind`, on
# the variable `var`; what they need at run time goes into `env` under numbered names.
_Emitter = Callable[
    [PlanHooks, Node, tuple[str, ...], dict[str, Any], str, str, dict[str, Any], int], list[str]
]


def _emit_containers(
    emit: _Emitter,
    hooks: PlanHooks,
    child: Node,
    sub: Any,
    i: int,
    ind: str,
    env: dict[str, Any],
    depth: int,
    list_extra: str,
) -> list[str]:
    """The branches after a value's `if type(v{i}) is str:` for an object (inline, by `emit`, when it
    has the shape `sub` had in the sample, up to MAX_INLINE_DEPTH) and a list (LIST, with
    `list_extra` appended to its arguments). Emitters differ only in their string handling."""
    v = f"v{i}"
    lines: list[str] = []
    if type(sub) is dict and depth < MAX_INLINE_DEPTH:
        shape = tuple(sub)
        env[f"S{i}"] = shape
        body = emit(hooks, child, shape, sub, v, ind + "        ", env, depth + 1)
        lines.append(f"{ind}elif type({v}) is dict:")
        lines.append(f"{ind}    if tuple({v}) == S{i}:")
        lines += body or [f"{ind}        pass"]
        lines.append(f"{ind}    else: DISPATCH({v}, N{i})")
    else:
        lines.append(f"{ind}elif type({v}) is dict: DISPATCH({v}, N{i})")
    lines.append(f"{ind}elif type({v}) is list: LIST({v}, N{i}{list_extra})")
    return lines


def _define_plan(body: list[str], env: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    """Compile an emitter's statements as `plan(d)` in `env` (an empty body: a plan that does nothing)."""
    source = "\n".join(["def plan(d):", *(body or ["    return"])])
    exec(source, env)  # noqa: S102 - generated from field names via repr(), nothing else
    return env["plan"]  # type: ignore[no-any-return]


def _emit_in_place(
    hooks: PlanHooks,
    node: Node,
    keys: tuple[str, ...],
    sample: dict[str, Any],
    var: str,
    ind: str,
    env: dict[str, Any],
    depth: int,
) -> list[str]:
    """Statements changing `var` (an object of shape `keys` at `node`) in place."""
    lines: list[str] = []
    for k in keys:
        child = node.child(k)
        kind = child.tkind
        if kind == KEEP:
            continue
        i = len(env)
        v, key = f"v{i}", repr(k)
        env[f"N{i}"] = child
        lines.append(f"{ind}{v} = {var}[{key}]")
        if kind == DROP and hooks.drop_geo:
            lines.append(f"{ind}if type({v}) is str: {var}[{key}] = typed({kind}, {v})")
            lines.append(f"{ind}elif type({v}) is dict or type({v}) is list: del {var}[{key}]")
            continue
        lines.append(f"{ind}if type({v}) is str:")
        if kind == TEXT:
            lines.append(f"{ind}    r = memo_get({v})")
            lines.append(f"{ind}    {var}[{key}] = compute({v}) if r is None else r")
        elif kind == IP:
            lines.append(f"{ind}    r = ip_get({v})")
            lines.append(f"{ind}    {var}[{key}] = typed({kind}, {v}) if r is None else r")
        else:
            lines.append(f"{ind}    {var}[{key}] = typed({kind}, {v})")
        lines += _emit_containers(_emit_in_place, hooks, child, sample.get(k), i, ind, env, depth, ", None")
    return lines


def compile_in_place(
    hooks: PlanHooks, node: Node, keys: tuple[str, ...], sample: dict[str, Any]
) -> Callable[[dict[str, Any]], None]:
    """A function changing, in place, an object of this shape at this field (no shared objects).

    Nested objects are handled inline when they have the shape they had in `sample` (checked
    each time), through the generic dispatch otherwise.
    """
    env: dict[str, Any] = {
        "memo_get": hooks.memo_get,
        "compute": hooks.compute,
        "ip_get": hooks.ip_get,
        "typed": hooks.typed,
        "DISPATCH": hooks.in_place_dict,
        "LIST": hooks.in_place_list,
    }
    return _define_plan(_emit_in_place(hooks, node, keys, sample, "d", "    ", env, 0), env)


def _emit_learn(
    hooks: PlanHooks,
    node: Node,
    keys: tuple[str, ...],
    sample: dict[str, Any],
    var: str,
    ind: str,
    env: dict[str, Any],
    depth: int,
    mark: bool = False,
) -> list[str]:
    """Learning each string leaf (`mark`: also noting it, as (object, key), for
    the walker's transform_marked)."""
    lines: list[str] = []
    for k in keys:
        child = node.child(k)
        kind = child.kind
        if kind == KEEP:
            continue
        i = len(env)
        v, key = f"v{i}", repr(k)
        env[f"N{i}"] = child
        env[f"L{i}"] = hooks.seen[kind]
        lines.append(f"{ind}{v} = {var}[{key}]")
        lines.append(f"{ind}if type({v}) is str:")
        lines.append(f"{ind}    if {v} not in L{i}: learn({kind}, {v})")
        if mark:
            env[f"M{i}"] = hooks.marks[child.tkind].append
            lines.append(f"{ind}    M{i}({var}); M{i}({key})")
        lines += _emit_containers(_emit_mark if mark else _emit_learn, hooks, child, sample.get(k), i, ind, env, depth, "")
    return lines


_emit_mark: _Emitter = functools.partial(_emit_learn, mark=True)


def compile_learn(
    hooks: PlanHooks, node: Node, keys: tuple[str, ...], sample: dict[str, Any]
) -> Callable[[dict[str, Any]], None]:
    """A function learning the names of an object of this shape at this field (nested objects
    inline, as in compile_in_place)."""
    env: dict[str, Any] = {
        "learn": hooks.learn_new,
        "DISPATCH": hooks.learn_dict,
        "LIST": hooks.learn_list,
    }
    return _define_plan(_emit_learn(hooks, node, keys, sample, "d", "    ", env, 0), env)


def compile_mark(
    hooks: PlanHooks, node: Node, keys: tuple[str, ...], sample: dict[str, Any]
) -> Callable[[dict[str, Any]], None]:
    """compile_learn noting the leaves too, for the walker's learn_marking."""
    env: dict[str, Any] = {
        "learn": hooks.learn_new,
        "DISPATCH": hooks.mark_dict,
        "LIST": hooks.mark_list,
    }
    return _define_plan(_emit_mark(hooks, node, keys, sample, "d", "    ", env, 0), env)


def compile_copy(
    hooks: PlanHooks, node: Node, keys: tuple[str, ...], sample: dict[str, Any]
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A function returning a pseudonymized copy of an object of this shape at this field."""
    lines = ["def plan(d):", "    o = {}"]
    env: dict[str, Any] = {
        "memo_get": hooks.memo_get,
        "compute": hooks.compute,
        "ip_get": hooks.ip_get,
        "typed": hooks.typed,
        "COPY": copy_json,
        "DISPATCH": hooks.copy_dict,
        "LIST": hooks.copy_list,
    }
    for i, k in enumerate(keys):
        child = node.child(k)
        kind = child.tkind
        key = repr(k)
        lines.append(f"    v = d[{key}]")
        if kind == KEEP:
            lines.append("    t = type(v)")
            lines.append(f"    o[{key}] = COPY(v) if t is dict or t is list else v")
            continue
        if kind == DROP and hooks.drop_geo:
            lines.append(f"    if type(v) is str: o[{key}] = typed({kind}, v)")
            lines.append("    elif type(v) is not dict and type(v) is not list:")
            lines.append(f"        o[{key}] = v")
            continue
        env[f"N{i}"] = child
        lines.append("    if type(v) is str:")
        if kind == TEXT:
            lines.append("        r = memo_get(v)")
            lines.append(f"        o[{key}] = compute(v) if r is None else r")
        elif kind == IP:
            lines.append("        r = ip_get(v)")
            lines.append(f"        o[{key}] = typed({kind}, v) if r is None else r")
        else:
            lines.append(f"        o[{key}] = typed({kind}, v)")
        lines.append(f"    elif type(v) is dict: o[{key}] = DISPATCH(v, N{i})")
        lines.append(f"    elif type(v) is list: o[{key}] = LIST(v, N{i})")
        lines.append(f"    else: o[{key}] = v")
    lines.append("    return o")
    exec("\n".join(lines), env)  # noqa: S102 - generated from field names via repr(), nothing else
    return env["plan"]  # type: ignore[no-any-return]
