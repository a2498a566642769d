"""The import graph: models/ imports nothing in a circle, and the web layer holds no torch.

Read from the source with `ast`, so an import inside a function counts as much as one at the
top of a module (a function-level import is how a circle usually hides), and so does a module
named in a string for `importlib.import_module` ("models.pointer:PointerNet").
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODULE_STRING = re.compile(r"(models(?:\.\w+)+)(?::\w+)?")


def module_names(package: str) -> dict[str, Path]:
    names = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def imported(tree: ast.AST, known: set[str]) -> set[str]:
    """The modules of `known` that the parsed module imports, anywhere in it."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            match = MODULE_STRING.fullmatch(node.value)
            if match:
                found.add(match.group(1))
    return found & known


def import_graph(package: str) -> dict[str, set[str]]:
    names = module_names(package)
    known = set(names)
    return {
        name: imported(ast.parse(path.read_text(), str(path)), known) - {name}
        for name, path in names.items()
    }


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle as [a, b, …, a], or None (depth-first search with three colours)."""
    state: dict[str, str] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_cycle_finder_finds_a_circle_and_only_a_circle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_the_graph_sees_imports_inside_functions_and_importlib_strings() -> None:
    graph = import_graph("models")
    assert "models.recipes" in graph["models.train"]
    assert {"models.pointer", "models.seq2seq"} <= graph["models.checkpoints"]
    assert "models.entmax" in graph["models.pointer"]  # imported inside a function


def test_models_import_nothing_in_a_circle() -> None:
    cycle = find_cycle(import_graph("models"))
    assert cycle is None, "import circle: " + " → ".join(cycle or [])


def test_the_web_layer_imports_no_torch() -> None:
    """app/ validates, calls the families' entry points in models/ and renders; tensors stay
    in models/."""
    offenders = []
    for name, path in module_names("app").items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            modules = []
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                modules = [node.module]
            offenders += [f"{name}: {m}" for m in modules if m.split(".")[0] == "torch"]
    assert offenders == []
