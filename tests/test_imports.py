"""The import graph: no circle in app/ or static/js/, and no import against the
floors (docs/architecture.md, "Floors").

A circle - even one only the type checker follows (`if TYPE_CHECKING:`) - means
two modules cannot be read, tested or moved apart, so every import counts,
wherever it stands in the file.  In the browser's ES modules a circle also
decides which module runs first by accident.  Lazy `import("./x.js")` calls
load a module when they run, not when the page starts, and are left out.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "app"
JS = ROOT / "static" / "js"

#: app's packages, lowest first: each may import only from its own floor and
#: the floors below (app/main.py, which builds the app, stands above them all)
FLOORS = ["core", "games", "bots", "store", "db", "rooms", "api"]


def _module_name(path: Path, base: Path) -> str:
    parts = list(path.relative_to(base).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def python_imports(root: Path = APP) -> dict[str, set[str]]:
    """Each module of `root` and the modules of the project it imports (a
    `from package import name` counts as the submodule when `name` is one)."""
    files = {_module_name(f, root.parent): f for f in root.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for mod, path in files.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")
                    up = up[: len(up) - (node.level - 1)]
                    base = ".".join([*up, *([base] if base else [])])
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    found.add(sub if sub in files else base)
        graph[mod] = {m for m in found if m in files and m != mod}
    return graph


_JS_IMPORT = re.compile(
    r"""^\s*(?:import|export)\b[^"'`;]*?(?:\bfrom\s*)?["']([^"']+)["']""", re.MULTILINE | re.DOTALL
)


def js_imports(root: Path = JS) -> dict[str, set[str]]:
    """Each module of `root` and the modules it imports statically (`import
    ... from "./x.js"`, `import "./x.js"`, `export ... from "./x.js"`)."""
    graph: dict[str, set[str]] = {}
    for path in root.rglob("*.js"):
        name = path.relative_to(root).as_posix()
        found: set[str] = set()
        for spec in _JS_IMPORT.findall(path.read_text()):
            if spec.startswith("."):
                target = (path.parent / spec).resolve()
                found.add(target.relative_to(root.resolve()).as_posix())
        graph[name] = found
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle per strongly connected group of modules (Tarjan's
    algorithm), each as a path that comes back to its start."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group: set[str] = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1 or v in graph.get(v, ()):
                groups.append(group)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_circle(graph, g) for g in groups]


def _circle(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    """A shortest way round inside `group`, from its first module back to it."""
    start = min(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & group):
                if w == start:
                    return [*paths[v], start]
                if w not in paths:
                    paths[w] = [*paths[v], w]
                    nxt.append(w)
        frontier = nxt
    raise AssertionError("a strongly connected group always has a circle")


def floor_of(module: str) -> int:
    parts = module.split(".")
    if len(parts) < 2:
        return len(FLOORS)  # the `app` package itself
    if parts[1] == "main":
        return len(FLOORS) + 1
    return FLOORS.index(parts[1])


def against_floors(graph: dict[str, set[str]]) -> list[str]:
    return sorted(
        f"{a} imports {b}"
        for a, targets in graph.items()
        for b in targets
        if floor_of(b) > floor_of(a)
    )


# ------------------------------------------------------------------- the tests


def test_no_circle_in_app() -> None:
    found = cycles(python_imports())
    assert not found, "import circles in app/:\n" + "\n".join(" -> ".join(c) for c in found)


def test_no_circle_in_static_js() -> None:
    found = cycles(js_imports())
    assert not found, "import circles in static/js/:\n" + "\n".join(" -> ".join(c) for c in found)


def test_no_import_against_the_floors() -> None:
    wrong = against_floors(python_imports())
    assert not wrong, "imports against the floors:\n" + "\n".join(wrong)


def test_every_package_of_app_has_a_floor() -> None:
    packages = {p.name for p in APP.iterdir() if (p / "__init__.py").exists()}
    assert packages == set(FLOORS)


# --------------------------------------------- the checks catch what they are for


def _tree(tmp: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp


def test_a_circle_only_the_type_checker_sees_is_found(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/rooms/__init__.py": "",
            "app/rooms/a.py": "from app.rooms.b import thing\n",
            "app/rooms/b.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n"
            ),
            "app/rooms/c.py": "from app.rooms import a\n",
        },
    )
    graph = python_imports(root / "app")
    assert cycles(graph) == [["app.rooms.a", "app.rooms.b", "app.rooms.a"]]


def test_an_import_up_a_floor_is_found(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/games/__init__.py": "",
            "app/games/x.py": "import app.rooms.y\n",
            "app/rooms/__init__.py": "",
            "app/rooms/y.py": "from app.games import x\n",
        },
    )
    graph = python_imports(root / "app")
    assert against_floors(graph) == ["app.games.x imports app.rooms.y"]


def test_a_js_circle_is_found_and_lazy_imports_are_not(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "a.js": 'import { b } from "./b.js";\nexport const a = 1;\n',
            "b.js": 'export { a } from "./a.js";\nexport const b = () => import("./c.js");\n',
            "c.js": 'import {\n  a,\n} from "./a.js";\nimport "./d/e.js";\n',
            "d/e.js": 'import { x } from "../lib.js";\n',
            "lib.js": "export const x = 1;\n",
        },
    )
    graph = js_imports(root)
    assert graph["c.js"] == {"a.js", "d/e.js"} and graph["d/e.js"] == {"lib.js"}
    assert cycles(graph) == [["a.js", "b.js", "a.js"]]
