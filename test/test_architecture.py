"""
The layers of doc/architecture.md, checked on the imports of every module.

core/ imports no ROS (rclpy, message packages, rosbags) and nothing of codegen/, bags/, nodes/,
commands/ or the message conversions; codegen/ builds on the core only; nodes/ and bags/ never
reach the command line; bags/ never reaches the nodes.  Relative imports are resolved, late
imports inside functions count too.  ``KNOWN`` would list an exception with its reason: a new
one fails here.
"""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = "robot_dynamics_ros"
ROS_MODULES = {"rclpy", "rosbags", "sensor_msgs", "std_msgs", "trajectory_msgs",
               "diagnostic_msgs", "rosgraph_msgs", "rcl_interfaces", "builtin_interfaces",
               "geometry_msgs", "robot_dynamics_interfaces", "launch", "launch_ros"}
# layer -> (forbidden third-party top-level modules, forbidden parts of this package)
RULES = {
    "core": (ROS_MODULES, {"codegen", "implementations", "bags", "nodes", "commands", "bringup",
                           "ros_messages", "serialized_messages", "joint_state_cdr",
                           "joint_state_checks", "cli"}),
    "codegen": (ROS_MODULES, {"implementations", "bags", "nodes", "commands", "bringup",
                              "ros_messages", "serialized_messages", "cli"}),
    "nodes": (set(), {"commands", "cli"}),
    "bags": (set(), {"nodes", "commands", "cli"}),
}
# Exceptions, each with its reason (none today: the core stopped importing the code generator).
KNOWN = {}


def imports_of(path: Path):
    """Return the absolute names ``path`` imports (relative imports resolved)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    package = parts[:-1] if parts[-1] != "__init__" else parts[:-1]
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                names.add(".".join(base + ([node.module] if node.module else [])))
            else:
                names.add(node.module)
    return ".".join(parts if parts[-1] != "__init__" else parts[:-1]), names


def violations():
    found = set()
    for path in sorted((ROOT / PKG).rglob("*.py")):
        module, names = imports_of(path)
        layer = module.split(".")[1] if module.count(".") else ""
        if layer not in RULES:
            continue
        outside, inside = RULES[layer]
        for name in names:
            parts = name.split(".")
            if parts[0] in outside:
                found.add((module, parts[0]))
            elif parts[0] == PKG and len(parts) > 1 and parts[1] in inside:
                found.add((module, parts[1]))
    return found


def test_layers_import_only_what_they_may():
    new = sorted(violations() - set(KNOWN))
    assert new == [], "imports across the layers of doc/architecture.md: (module, what)"


def test_the_rules_see_an_import_of_each_kind():
    # The checker itself: every layer's modules are found and their imports resolved.
    module, names = imports_of(ROOT / PKG / "core" / "algorithms" / "rnea.py")
    assert module == "robot_dynamics_ros.core.algorithms.rnea"
    assert any(n.startswith("robot_dynamics_ros.core.") for n in names)
    module, names = imports_of(ROOT / PKG / "nodes" / "base.py")
    assert "rclpy" in {n.split(".")[0] for n in names}


# -- core/algorithms reads one way (issue 27) ---------------------------------------------------
# The algorithm texts at the bottom, the compiled kernels above, the checked paths, the route,
# the public functions on top; the friction law (core/control/) beside the texts.  Package
# __init__ files import every public function and are left out (their imports are the package's
# exports, not dependencies of the modules).
ONE_WAY = ("core/algorithms", "core/control")


def _from_imports(text: str, package: str) -> set:
    """Return ``from X import y`` in ``package`` as X.y (y may be a module), late included."""
    names = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom):
            parts = package.split(".")
            base = ".".join(parts[:len(parts) - node.level + 1]) if node.level else ""
            source = ".".join(p for p in (base, node.module or "") if p)
            names.update(f"{source}.{alias.name}" for alias in node.names)
    return names


def _module_imports(path: Path) -> set:
    """Return the modules of this package ``path`` imports, ``from . import x`` as module x."""
    module, names = imports_of(path)
    return names | _from_imports(path.read_text(encoding="utf-8"), module.rsplit(".", 1)[0])


def import_graph(folders=ONE_WAY) -> dict:
    """Return module -> the modules of ``folders`` it imports (no package __init__)."""
    paths = [p for folder in folders for p in sorted((ROOT / PKG / folder).glob("*.py"))
             if p.name != "__init__.py"]
    modules = {imports_of(p)[0]: p for p in paths}
    return {m: {n for n in _module_imports(p) if n in modules and n != m}
            for m, p in modules.items()}


def cycles(graph: dict) -> list:
    """Return the import cycles of ``graph`` (each a list of modules), by depth-first search."""
    found, state = [], {}

    def visit(node, stack):
        state[node] = "open"
        stack.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == "open":
                found.append(stack[stack.index(target):] + [target])
            elif target not in state:
                visit(target, stack)
        stack.pop()
        state[node] = "done"
    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    return found


def test_core_algorithms_has_no_import_cycle_late_imports_included():
    graph = import_graph()
    algorithms = f"{PKG}.core.algorithms"
    # the checker sees the layers: the route imports the compiled kernels and the friction law
    assert f"{algorithms}.compiled" in graph[f"{algorithms}.route"]
    assert f"{PKG}.core.control.friction" in graph[f"{algorithms}.route"]
    assert cycles(graph) == []


def test_the_cycle_check_sees_a_late_import():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
    text = "def f():\n    from . import compiled\n    from ..control.friction import sign\n"
    assert _from_imports(text, f"{PKG}.core.algorithms") == {
        f"{PKG}.core.algorithms.compiled", f"{PKG}.core.control.friction.sign"}
