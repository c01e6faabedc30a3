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
                           "joint_state_checks", "cli", "ros_distro"}),
    "codegen": (ROS_MODULES, {"implementations", "bags", "nodes", "commands", "bringup",
                              "ros_messages", "serialized_messages", "cli", "ros_distro"}),
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
