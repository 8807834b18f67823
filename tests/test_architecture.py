"""The import graph of the `segmenter` package has no cycle: every strongly connected component of
module imports (function-level imports included, `if TYPE_CHECKING:` ones left out, and then counted
too) is one module. And the inference path (`segmenter.api`, which `Segmenter.segment` runs from)
reaches no training code: no module of `segmenter.training`, and not scikit-learn."""

from __future__ import annotations

import grimp  # the dev extra installs it


def import_cycles(graph) -> list[list[str]]:
    """The strongly connected components of more than one module of `graph` (Tarjan's algorithm, with
    an explicit stack so that a deep graph cannot overflow Python's)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    cycles = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, imported = work[-1]
            step = next(imported, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph.find_modules_directly_imported_by(step)))))
                elif step in on_stack:
                    low[module] = min(low[module], index[step])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
            if low[module] == index[module]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == module:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return cycles


def describe(graph, component: list[str]) -> str:
    """One import chain around `component` that starts and ends at its first module (`a -> b -> a`)."""
    first, members = component[0], set(component)
    came_from: dict[str, str] = {}
    frontier = [first]
    while frontier and first not in came_from:  # breadth first, inside the component
        following = []
        for module in frontier:
            # a module importing itself (cli's `__main__` block) is no cycle: skip it
            for imported in sorted(graph.find_modules_directly_imported_by(module) & members - {module}):
                if imported not in came_from:
                    came_from[imported] = module
                    following.append(imported)
        frontier = following
    chain, module = [first], first
    while True:
        module = came_from[module]
        chain.append(module)
        if module == first:
            break
    return " -> ".join(reversed(chain))


def test_the_segmenter_package_has_no_import_cycle():
    graph = grimp.build_graph("segmenter", exclude_type_checking_imports=True)
    cycles = import_cycles(graph)
    found = [f"{describe(graph, c)} (modules that import each other: {', '.join(c)})" for c in cycles]
    assert not cycles, "import cycles: " + "; ".join(found)


def test_the_segmenter_package_has_no_import_cycle_counting_type_checking_imports():
    graph = grimp.build_graph("segmenter", exclude_type_checking_imports=False)
    cycles = import_cycles(graph)
    found = [f"{describe(graph, c)} (modules that import each other: {', '.join(c)})" for c in cycles]
    assert not cycles, "import cycles: " + "; ".join(found)


def test_the_inference_path_reaches_no_training_code():
    """Every module `segmenter.api` imports, even indirectly, even inside a function or under
    `if TYPE_CHECKING:`, is outside `segmenter.training`, and none of them imports scikit-learn."""
    graph = grimp.build_graph(
        "segmenter", exclude_type_checking_imports=False, include_external_packages=True
    )
    # the check sees what it looks for: training's function-level import of scikit-learn
    assert graph.chain_exists("segmenter.training.fitting", "sklearn")
    reachable = graph.find_upstream_modules("segmenter.api")
    training = sorted(m for m in reachable if m.split(".")[:2] == ["segmenter", "training"])
    chains = [" -> ".join(graph.find_shortest_chain("segmenter.api", m)) for m in training]
    assert not training, "the inference path imports training code: " + "; ".join(chains)
    chain = graph.find_shortest_chain("segmenter.api", "sklearn")
    assert "sklearn" not in reachable, "the inference path imports scikit-learn: " + " -> ".join(chain or ())


def test_the_cycle_finder_finds_a_cycle():
    class Graph:
        imports = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
        modules = set(imports)

        def find_modules_directly_imported_by(self, module):
            return self.imports[module]

    graph = Graph()
    assert import_cycles(graph) == [["a", "b", "c"]]
    assert describe(graph, ["a", "b", "c"]) == "a -> b -> c -> a"
