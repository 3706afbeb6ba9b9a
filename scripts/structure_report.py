"""Structure figures of the package, read from its source with `ast` (nothing is imported).

    python scripts/structure_report.py [--json]

Top-level modules, import loops between modules (lazy imports included: a loop hidden
behind an import inside a function is still a loop), lazy imports of the package's own
modules, modules over 600 lines and functions over 80 lines.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

PKG = "pytest_soclab"
SRC = Path(__file__).resolve().parents[1] / "src" / PKG


def module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def resolve(mod: str, node: ast.ImportFrom, is_pkg: bool) -> str:
    if not node.level:
        return node.module or ""
    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
    return ".".join(base + ([node.module] if node.module else []))


def imports(path: Path, modules: set[str]) -> list[tuple[str, bool, bool]]:
    """(target module, lazy, type-checking only) for each import of the package's own modules."""
    mod = module_name(path)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: list[tuple[str, bool, bool]] = []

    def visit(node: ast.AST, lazy: bool, typing_only: bool) -> None:
        for child in ast.iter_child_nodes(node):
            child_lazy = lazy or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            child_typing = typing_only or (
                isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test)
            )
            targets: list[str] = []
            if isinstance(child, ast.Import):
                targets = [a.name for a in child.names]
            elif isinstance(child, ast.ImportFrom):
                base = resolve(mod, child, path.name == "__init__.py")
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in child.names]
            for t in targets:
                while t and t not in modules:
                    t = t.rpartition(".")[0]
                if t.startswith(PKG) and t != mod:
                    out.append((t, child_lazy, child_typing))
            visit(child, child_lazy, child_typing)

    visit(tree, False, False)
    return out


def external_imports(path: Path) -> list[str]:
    """Every module name an import statement of the file names, wherever it stands (own modules too)."""
    out: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out.append(node.module)
    return out


def loops(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]
    sys.setrecursionlimit(10_000)

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def report() -> dict[str, object]:
    files = sorted(SRC.rglob("*.py"))
    modules = {module_name(p) for p in files}
    graph: dict[str, set[str]] = {}
    lazy: list[str] = []
    big_modules: list[str] = []
    big_functions: list[str] = []
    for p in files:
        mod = module_name(p)
        # Packages import their own submodules by design (a face); only real edges count.
        edges = imports(p, modules)
        graph[mod] = {t for t, _lazy, typing_only in edges if not typing_only and not mod.startswith(t + ".")}
        lazy += [f"{mod} -> {t}" for t, is_lazy, typing_only in edges if is_lazy and not typing_only]
        text = p.read_text(encoding="utf-8")
        n = text.count("\n")
        if n > 600:
            big_modules.append(f"{p.relative_to(SRC)} {n}")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > 80:
                    big_functions.append(f"{p.relative_to(SRC)}:{node.name} {length}")
    top = sorted(p.name for p in SRC.glob("*.py") if p.name != "__init__.py")
    return {
        "top_level_modules": top,
        "import_loops": loops(graph),
        "lazy_imports": sorted(set(lazy)),
        "modules_over_600_lines": big_modules,
        "functions_over_80_lines": big_functions,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="the whole report as JSON")
    args = ap.parse_args()
    rep = report()
    if args.json:
        print(json.dumps(rep, indent=2))
        return 0
    for key, value in rep.items():
        assert isinstance(value, list)
        print(f"{key.replace('_', ' ')}: {len(value)}")
        for v in value:
            print(f"  {' <-> '.join(v) if isinstance(v, list) else v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
