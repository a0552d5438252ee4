"""Layers point down (docs/architecture.md): the import graph of `src/modelstream`, read from the
source the way import-linter's contracts read it, against the layers and the list of allowed
package pairs below.

Every import counts, at any depth of a module (a lazy import inside a function, and one under
`TYPE_CHECKING`, are still a dependency). A unit is a top-level module or package of
`modelstream`; the emulator modules of the protocol packages (`protocols/<name>/emulator.py`) are
the emulator's plug-ins, loaded by name from `Emulation.module` and never by the protocol, so they
count as `testing`. A package's `__main__.py` (`python -m modelstream.server`) is an entry
point, at the top with `modelstream/__main__.py`.

Adding an import between two units that do not yet depend on each other means adding its pair to
`ALLOWED` — which the test only accepts when it points down the layers.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import modelstream
from support import REPO

PACKAGE = Path(modelstream.__file__).parent

# Lowest first. A unit may import units of lower layers only, never its own layer's others.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("types", "console", "bounded_json"),  # plain values and the commands' shared vocabulary
    ("items", "results", "shapes", "tool_arguments"),
    ("errors",),  # errors carry the partial result
    ("jsonwire", "media", "openai_messages"),
    ("messages", "tools", "grammar", "assembler", "framing", "error_bodies", "auth"),
    ("accumulator", "structured"),  # a stream's items; structured answers (partial and final)
    ("protocols",),  # the wire protocols, both directions (sans-IO)
    ("stream", "platforms", "web"),  # the decoding pipeline; cloud platforms; HTTP pieces
    ("catalogue", "traces"),  # the model catalogue; trace recording, storage and the viewer
    ("client",),  # the HTTP shells: transport, retries, resume
    ("conversation", "testing"),  # the tool loop; the emulator (and its protocol plug-ins)
    ("server", "playground"),  # the gateway; the chat page (neither imports the other)
    ("serving",),  # assembles the server with the playground
    ("cli",),  # the `modelstream` program: runs the commands
    ("_exports", "__main__"),  # the public names of `import modelstream`
)

# Every pair of units with an import between them: importer -> imported.
ALLOWED: dict[str, frozenset[str]] = {
    name: frozenset(targets.split())
    for name, targets in {
        "console": "",
        "bounded_json": "",
        "types": "",
        "items": "types",
        "results": "types",
        "shapes": "types",
        "tool_arguments": "",
        "errors": "results types",
        "jsonwire": "errors items types",
        "media": "errors",
        "openai_messages": "errors types",
        "messages": "errors media openai_messages types",
        "tools": "errors types",
        "grammar": "errors items tool_arguments types",
        "assembler": "errors items results tool_arguments types",
        "framing": "errors",
        "error_bodies": "errors",
        "auth": "errors",
        "accumulator": "items results types",
        "structured": "errors tools types",
        "protocols": "assembler auth error_bodies errors framing grammar items jsonwire media "
        "openai_messages shapes structured tool_arguments types",
        "stream": "assembler error_bodies errors framing protocols results types",
        "catalogue": "bounded_json errors platforms protocols results types",
        "web": "auth bounded_json errors",
        "platforms": "auth errors protocols",
        "traces": "auth console errors items platforms protocols results types web",
        "client": "auth catalogue error_bodies errors framing messages platforms protocols "
        "results stream structured tools traces types",
        "conversation": "client errors jsonwire messages openai_messages results tools types",
        "testing": "assembler bounded_json errors framing platforms protocols types",
        "server": "auth catalogue client console errors jsonwire openai_messages platforms "
        "protocols results shapes traces types web",
        "playground": "auth catalogue errors web",
        "serving": "catalogue console errors playground server web",
        "cli": "bounded_json catalogue client console errors grammar items jsonwire platforms "
        "protocols results server serving stream testing types",
        "_exports": "accumulator assembler client conversation errors framing grammar "
        "messages protocols results stream tools types",
        "__main__": "cli serving traces",
    }.items()
}


def _unit(module: str) -> str:
    parts = module.split(".")
    if len(parts) >= 4 and parts[1] == "protocols" and parts[3] == "emulator":
        return "testing"
    if parts[-1] == "__main__":  # `python -m modelstream.server`: an entry point, at the top
        return "__main__"
    return parts[1] if len(parts) > 1 else ""


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    relative = Path(*name.split("."))
    base = PACKAGE.parent / relative
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


def _imports(path: Path, *, top_level_only: bool = False) -> set[str]:
    """The modelstream modules `path` imports, anywhere in it (or only at its top level: the
    imports that run when it is imported)."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(), str(path))
    found: set[str] = set()
    for node in tree.body if top_level_only else ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            for alias in node.names:  # `from . import wire`: the module, not the package
                child = f"{target}.{alias.name}"
                found.add(child if _is_module(child) else target)
    return {name for name in found if name == "modelstream" or name.startswith("modelstream.")}


def _graph() -> dict[str, dict[str, set[str]]]:
    """importer unit -> imported unit -> the importing modules."""
    edges: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        if module == "modelstream":
            continue  # the package's lazy `__getattr__` re-exports `_exports`
        for target in _imports(path):
            importer, imported = _unit(module), _unit(target)
            if imported and importer != imported:
                edges[importer][imported].add(module)
    return edges


def _layer_of() -> dict[str, int]:
    return {unit: index for index, layer in enumerate(LAYERS) for unit in layer}


def test_every_unit_is_in_one_layer() -> None:
    layer_of = _layer_of()
    units = {_unit(_module_name(path)) for path in PACKAGE.rglob("*.py")} - {""}
    assert sum(len(layer) for layer in LAYERS) == len(layer_of), "a unit is in two layers"
    assert units <= set(layer_of), f"units in no layer: {sorted(units - set(layer_of))}"
    assert set(ALLOWED) == set(layer_of)


def test_the_allowed_pairs_point_down() -> None:
    layer_of = _layer_of()
    upward = [
        f"{importer} -> {imported}"
        for importer, targets in ALLOWED.items()
        for imported in targets
        if layer_of[imported] >= layer_of[importer]
    ]
    assert upward == []


def test_every_import_is_an_allowed_pair() -> None:
    graph = _graph()
    unexpected = [
        f"{importer} -> {imported} (in {', '.join(sorted(modules))})"
        for importer, targets in sorted(graph.items())
        for imported, modules in sorted(targets.items())
        if imported not in ALLOWED.get(importer, frozenset())
    ]
    assert unexpected == [], "\n".join(unexpected)


def test_the_list_names_no_pair_that_is_gone() -> None:
    graph = _graph()
    stale = [
        f"{importer} -> {imported}"
        for importer, targets in sorted(ALLOWED.items())
        for imported in sorted(targets)
        if imported not in graph.get(importer, {})
    ]
    assert stale == []


def test_no_module_imports_itself_back_at_load_time() -> None:
    """No circle among modules through their top-level imports (those run at import)."""
    top_level = {
        _module_name(path): _imports(path, top_level_only=True) - {"modelstream"}
        for path in PACKAGE.rglob("*.py")
    }
    cycle = _a_cycle(top_level)
    assert cycle is None, " -> ".join(cycle or [])


def _a_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            # importing a submodule runs its package's __init__ first, which is not a circle
            if node.startswith(target + "."):
                continue
            if state.get(target) == 1:
                return [*stack[stack.index(target) :], target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_architecture_page_draws_these_layers() -> None:
    """docs/architecture.md's drawing, top line first, names the units of each layer here (the
    units a line starts with; its description follows)."""
    units = _layer_of()
    page = (REPO / "docs" / "architecture.md").read_text()
    drawing = page.split("## The layers", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    drawn = []
    for line in drawing.splitlines():
        words = line.split()
        count = next((i for i, word in enumerate(words) if word not in units), len(words))
        if count:
            drawn.append(tuple(sorted(words[:count])))
    assert drawn[::-1] == [tuple(sorted(layer)) for layer in LAYERS]
