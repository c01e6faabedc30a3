"""
The layers of doc/architecture.md, checked on the imports of every module.

Every module's imports are read from its source (relative imports resolved; imports inside
functions count too, so a late import cannot hide what a module depends on):

* no import circle anywhere in the package (the graph of module imports, late ones included);
* each layer imports only the layers below it (``MAY_IMPORT``), and the ROS-free ones no ROS;
* below the command line, no late import reaches another layer (a late import is either a
  circle being hidden or a dependency the layer table does not show; the commands may import
  their subcommand's layers late, so that `robot-dynamics check` does not load rclpy);
* ``nodes/bringup.py`` is imported by the command line only (the nodes read ``nodes/kinds.py``);
* ``bag process`` reaches no module that needs rclpy or the message packages.

``KNOWN_*`` list the exceptions, each with its reason: a new one fails here.
"""
import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = "robot_dynamics_ros"
# rclpy, the message packages and launch: what a ROS-free module must not import (rosbags reads
# and writes bags without ROS and is allowed in bags/)
ROS_MODULES = {"rclpy", "sensor_msgs", "std_msgs", "trajectory_msgs", "diagnostic_msgs",
               "rosgraph_msgs", "rcl_interfaces", "builtin_interfaces", "geometry_msgs",
               "robot_dynamics_interfaces", "launch", "launch_ros"}
# layer -> the layers of this package it may import (its own included); commands: any
MAY_IMPORT = {
    "core": {"core"},
    "codegen": {"core", "codegen"},
    "messages": {"core", "messages"},
    "nodes": {"core", "codegen", "messages", "nodes"},
    "bags": {"core", "codegen", "messages", "bags"},
}
# The modules that need rclpy or the message packages; every other module outside nodes/ and
# commands/ is ROS-free (imports none of ROS_MODULES, nor these).
ROS_SIDE = {"messages.ros", "messages.serialized", "bags.record", "bags.play", "bags.qos"}
# What `robot-dynamics bag process` imports (the command line's path to it is checked by
# test/bags/test_process_without_ros.py, which runs it with rclpy blocked).
BAG_PROCESS = ("bags.process", "bags.fleet", "bags.engine")
# (module, what): imports across the rules above, each with its reason.
KNOWN = {
    ("bags.types", "rclpy"): "deserialize() falls back to rclpy's decoder, where it is "
                             "importable, for messages rosbags refuses (trailing bytes)",
}
KNOWN_LATE: dict = {}
# Import circles: sets of modules that import each other.
KNOWN_CYCLES: set = set()


def module_name(path: Path, root: Path = ROOT) -> str:
    """Return the dotted name of ``path`` under ``root``, without the package prefix."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts[1:])


def layer_of(module: str) -> str:
    """Return the layer of a module (its first name under the package; '' for the package)."""
    return module.split(".")[0]


class Imports:
    """Every module of a package and what it imports, from the source (no module is run)."""

    def __init__(self, root: Path = ROOT, package: str = PKG):
        self.package = package
        self.paths = {module_name(p, root): p for p in sorted((root / package).rglob("*.py"))}
        # module -> [(imported name, late, line)]; names absolute, "pkg." prefix removed for ours
        self.imports = {m: list(self._read(m, p)) for m, p in self.paths.items()}

    def _read(self, module: str, path: Path):
        is_package = path.name == "__init__.py"
        here = [self.package] + ([p for p in module.split(".") if p])
        package = here if is_package else here[:-1]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        late = {id(n) for f in ast.walk(tree)
                if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                for n in ast.walk(f)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield self._ours(alias.name), id(node) in late, node.lineno
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package[:len(package) - node.level + 1] +
                                    ([node.module] if node.module else []))
                for alias in node.names:     # `from pkg import submodule` imports the submodule
                    full = self._ours(f"{base}.{alias.name}")
                    name = full if full in self.paths else self._ours(base)
                    yield name, id(node) in late, node.lineno

    def _ours(self, name: str) -> str:
        """Map this package's names to module keys ('core.rnea'); others stay as they are."""
        if name == self.package:
            return ""
        if name.startswith(self.package + "."):
            name = name[len(self.package) + 1:]
            while name and name not in self.paths:       # a name inside a module
                name = name.rpartition(".")[0]
            return name
        return "!" + name                                # third party

    def graph(self) -> dict:
        """Return module -> the modules of the package it imports (late imports included)."""
        return {m: {n for n, _, _ in names if not n.startswith("!") and n != m}
                for m, names in self.imports.items()}


def cycles(graph: dict) -> list:
    """Return the import circles of ``graph`` (strongly connected sets of > 1 module)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(start):                   # Tarjan's algorithm, iterative (no recursion limit)
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = set()
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.add(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        found.append(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def ros_free(module: str) -> bool:
    """Tell whether ``module`` must import no ROS (see ``ROS_SIDE``)."""
    return layer_of(module) not in ("nodes", "commands") and module not in ROS_SIDE


def violations(imports: Imports) -> dict:
    """Return {(module, what): line} of every import across the rules of this module."""
    found = {}
    for module, names in imports.imports.items():
        layer = layer_of(module)
        for name, late, line in names:
            if name.startswith("!"):
                if ros_free(module) and name[1:].split(".")[0] in ROS_MODULES:
                    found[(module, name[1:].split(".")[0])] = line
                continue
            target = layer_of(name)
            if layer in MAY_IMPORT and target and target not in MAY_IMPORT[layer]:
                found[(module, target)] = line
            elif ros_free(module) and name in ROS_SIDE:
                found[(module, name)] = line
            elif name == "nodes.bringup" and layer != "commands":
                found[(module, name)] = line
    return found


def late_imports(imports: Imports) -> dict:
    """Return {(module, layer): line} of late imports of another layer, below the commands."""
    return {(module, layer_of(name)): line
            for module, names in imports.imports.items() if layer_of(module) != "commands"
            for name, late, line in names
            if late and not name.startswith("!") and layer_of(name) not in ("", layer_of(module))}


@functools.lru_cache(maxsize=None)
def package_imports() -> Imports:
    """Return this package's imports, read once per test session."""
    return Imports()


def test_no_import_circle_in_the_package():
    found = set(cycles(package_imports().graph()))
    assert found - KNOWN_CYCLES == set(), "import circles (late imports included)"


def test_layers_import_only_what_they_may():
    found = violations(package_imports())
    new = sorted(set(found) - set(KNOWN))
    assert new == [], "imports across the layers of doc/architecture.md: (module, what)"


def test_no_late_import_across_layers():
    new = sorted(set(late_imports(package_imports())) - set(KNOWN_LATE))
    assert new == [], "late imports of another layer: (module, layer)"


def test_bag_process_reaches_no_ros():
    imports = package_imports()
    graph, seen, todo = imports.graph(), set(), list(BAG_PROCESS)
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(graph[module])
    assert sorted(m for m in seen if not ros_free(m)) == []
    needs_ros = {m for m in seen for name, late, _ in imports.imports[m]
                 if not late and name.startswith("!") and name[1:].split(".")[0] in ROS_MODULES}
    assert needs_ros == set()


def test_the_rules_see_an_import_of_each_kind(tmp_path):
    # The checker itself: relative, absolute and `from package import module` imports are
    # resolved, late imports are seen, a circle through a late import is found.
    imports = package_imports()
    names = {n for n, _, _ in imports.imports["core.algorithms.rnea"]}
    assert any(n.startswith("core.") for n in names)
    assert "!rclpy" in {n.split(".")[0] for n, _, _ in imports.imports["nodes.base"]}
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    for name, text in {"__init__.py": "", "sub/__init__.py": "",
                       "a.py": "from .sub import b\n",
                       "sub/b.py": "def f():\n    from .. import c\n",
                       "c.py": "import pkg.a\nfrom pkg import sub\n"}.items():
        (package / name).write_text(text)
    toy = Imports(tmp_path, "pkg")
    assert toy.graph() == {"": set(), "sub": set(), "a": {"sub.b"}, "sub.b": {"c"},
                           "c": {"a", "sub"}}
    assert [(n, late) for n, late, _ in toy.imports["sub.b"]] == [("c", True)]
    assert cycles(toy.graph()) == [frozenset({"a", "sub.b", "c"})]
