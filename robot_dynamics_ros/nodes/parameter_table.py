"""
The nodes' parameters as tables of data: one YAML file per table in ``nodes/params/``.

The format is generate_parameter_library's (the tables of ros2_controllers'
``*_parameters.yaml``): under one top-level key, each parameter is a mapping with ``type``
(bool, int, double, string and their ``_array`` forms), ``default_value``, ``description``,
``read_only`` and ``validation``; nested mappings make dotted names (``payload: mass:`` is
``payload.mass``).  Validators, as that library names them: ``bounds<>``, ``gt<>``, ``gt_eq<>``,
``lt<>``, ``lt_eq<>``, ``one_of<>`` (scalars; ``bounds<>`` on an array bounds each element),
``element_bounds<>``, ``fixed_size<>``, ``size_gt<>``, ``size_lt<>``, ``not_empty<>``,
``unique<>`` (arrays).  One key is ours: ``robot_default`` instead of ``default_value`` for a
parameter whose default is the robot's (gravity, payload): it is declared unset and takes the
robot's value when the node loads its robot.

What uses the tables: :class:`~robot_dynamics_ros.nodes.parameters.NodeParameters` declares
every parameter of a node's tables with a ParameterDescriptor (description, read-only, range) and
checks every value with :func:`check`; :func:`markdown` writes the parameter reference
(``doc/parameters.md``; ``python -m robot_dynamics_ros.nodes.parameter_table --write`` updates
it, a test checks that it is current).  Which node has which tables: ``kinds.NODE_TYPES``.
"""
from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import yaml

TABLE_DIR = Path(__file__).resolve().with_name("params")
TYPES = {"bool": bool, "int": int, "double": float, "string": str}
VALIDATORS = ("bounds<>", "gt<>", "gt_eq<>", "lt<>", "lt_eq<>", "one_of<>", "element_bounds<>",
              "fixed_size<>", "size_gt<>", "size_lt<>", "not_empty<>", "unique<>")
LEAF_KEYS = {"type", "default_value", "robot_default", "description", "read_only", "validation"}


class TableError(ValueError):
    """A parameter table that does not follow the format (a defect of the package)."""


@dataclass(frozen=True)
class ParameterSpec:
    """One parameter of a table."""

    name: str                       # dotted: payload.mass
    type: str                       # bool, int, double, string, or one of those + "_array"
    default: object                 # the default value (None with robot_default)
    description: str
    read_only: bool = False
    validation: dict = field(default_factory=dict)
    robot_default: str = ""         # what the robot gives when there is no default_value

    @property
    def is_array(self) -> bool:
        """Tell whether the parameter is an array."""
        return self.type.endswith("_array")

    @property
    def element_type(self) -> type:
        """Return the Python type of the value (of each element for arrays)."""
        return TYPES[self.type.removesuffix("_array")]

    def bounds(self) -> tuple | None:
        """Return the inclusive (low, high) of ``bounds<>`` / ``element_bounds<>``, or None."""
        for key in ("bounds<>", "element_bounds<>"):
            if key in self.validation:
                low, high = self.validation[key]
                return low, high
        return None


def table_path(table: str) -> Path:
    """Return the YAML file of ``table``."""
    return TABLE_DIR / f"{table}.yaml"


@lru_cache(maxsize=None)
def load_table(table: str) -> tuple[ParameterSpec, ...]:
    """Read table ``table`` (``nodes/params/<table>.yaml``); TableError says what is wrong."""
    path = table_path(table)
    with open(path, encoding="utf-8") as f:
        data = yaml.safe_load(f)
    if not isinstance(data, dict) or list(data) != [table]:
        raise TableError(f"{path}: expected one top-level key '{table}'")
    specs: list[ParameterSpec] = []
    _collect(data[table] or {}, "", specs, path)
    return tuple(specs)


def _collect(tree: dict, prefix: str, specs: list, path: Path):
    for key, value in tree.items():
        name = f"{prefix}{key}"
        if not isinstance(value, dict):
            raise TableError(f"{path}: {name}: expected a mapping")
        if "type" in value:
            specs.append(_spec(name, value, path))
        else:
            _collect(value, f"{name}.", specs, path)


def _spec(name: str, leaf: dict, path: Path) -> ParameterSpec:
    unknown = set(leaf) - LEAF_KEYS
    kind = leaf["type"]
    if unknown or kind.removesuffix("_array") not in TYPES:
        raise TableError(f"{path}: {name}: unknown keys {sorted(unknown)} or type '{kind}'")
    validation = dict(leaf.get("validation") or {})
    bad = [v for v in validation if v not in VALIDATORS]
    if bad:
        raise TableError(f"{path}: {name}: unknown validators {bad}")
    if ("default_value" in leaf) == ("robot_default" in leaf):
        raise TableError(f"{path}: {name}: give either default_value or robot_default")
    spec = ParameterSpec(name, kind, leaf.get("default_value"),
                         " ".join(str(leaf.get("description", "")).split()),
                         bool(leaf.get("read_only", False)), validation,
                         str(leaf.get("robot_default", "")))
    if spec.default is not None:
        try:
            check(spec, spec.default)
        except ValueError as exc:
            raise TableError(f"{path}: default: {exc}") from None
    return spec


def load_tables(tables) -> tuple[ParameterSpec, ...]:
    """Read several tables; a name in two of them is a TableError."""
    specs = tuple(spec for table in tables for spec in load_table(table))
    names = [s.name for s in specs]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise TableError(f"tables {list(tables)}: parameters declared twice: {repeated}")
    return specs


# ------------------------------------------------------------------------------- validation
def check(spec: ParameterSpec, value) -> None:
    """Raise ValueError naming the parameter when ``value`` breaks a rule of ``spec``."""
    if spec.is_array:
        _check_array(spec, value)
    else:
        _check_scalar(spec, value, spec.name)


def _type_ok(spec: ParameterSpec, value) -> bool:
    expected = spec.element_type
    if expected is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if expected is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, expected)


def _check_scalar(spec: ParameterSpec, value, what: str):
    if not _type_ok(spec, value):
        raise ValueError(f"{what}: expected a {spec.element_type.__name__}, got {value!r}")
    rules = spec.validation
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{what}: {value} is not a finite number")
    bounds = rules.get("bounds<>", rules.get("element_bounds<>"))
    if bounds is not None and not bounds[0] <= value <= bounds[1]:
        raise ValueError(f"{what}: {value} is outside [{bounds[0]:g}, {bounds[1]:g}]")
    for key, test, word in (("gt<>", lambda v, x: v > x, ">"),
                            ("gt_eq<>", lambda v, x: v >= x, ">="),
                            ("lt<>", lambda v, x: v < x, "<"),
                            ("lt_eq<>", lambda v, x: v <= x, "<=")):
        if key in rules and not test(value, rules[key][0]):
            raise ValueError(f"{what}: expected {word} {rules[key][0]:g}, got {value}")
    if "one_of<>" in rules and value not in rules["one_of<>"][0]:
        raise ValueError(f"{what}: '{value}' is not one of {rules['one_of<>'][0]}")


def _check_array(spec: ParameterSpec, value):
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
        raise ValueError(f"{spec.name}: expected a list, got {value!r}")
    rules, size = spec.validation, len(value)
    for key, test, word in (("fixed_size<>", lambda n, x: n == x, "exactly"),
                            ("size_gt<>", lambda n, x: n > x, "more than"),
                            ("size_lt<>", lambda n, x: n < x, "fewer than")):
        if key in rules and not test(size, rules[key][0]):
            raise ValueError(f"{spec.name}: expected {word} {rules[key][0]} values, got {size}")
    if "not_empty<>" in rules and size == 0:
        raise ValueError(f"{spec.name}: expected at least one value")
    if "unique<>" in rules and len(set(value)) != size:
        raise ValueError(f"{spec.name}: values repeated in {list(value)}")
    for i, element in enumerate(value):
        _check_scalar(spec, element, f"{spec.name}[{i}]")


# ------------------------------------------------------------------------------- reference
def markdown(nodes: dict) -> str:
    """
    Write the parameter reference page: which tables each node has, then each table's rows.

    ``nodes``: node kind -> (executable, table names), in the order of the page.
    """
    lines = ["# Node parameters", "",
             "Generated from the parameter tables `robot_dynamics_ros/nodes/params/*.yaml` by",
             "`python -m robot_dynamics_ros.nodes.parameter_table --write`; do not edit by hand",
             "(`test/nodes/test_parameter_table.py` checks that this page is current). The",
             "ranges are in the parameter descriptors too (`ros2 param describe`). Read-only",
             "parameters are set at start-up (`-p`, `--params-file`, launch arguments); the",
             "others can also be changed at run time (`ros2 param set`), each change validated",
             "with the node's other values and refused with the reason.", "",
             "| node (executable) | parameter tables |", "| --- | --- |"]
    tables: list[str] = []
    for kind, (executable, node_tables) in nodes.items():
        lines.append(f"| {kind} (`{executable}`) | "
                     + ", ".join(f"[`{t}`](#table-{t})" for t in node_tables)
                     + " |")
        tables += [t for t in node_tables if t not in tables]
    for table in tables:
        lines += ["", f"## Table `{table}`", "",
                  f"`robot_dynamics_ros/nodes/params/{table}.yaml`", "",
                  "| parameter | type | default | rules | description |",
                  "| --- | --- | --- | --- | --- |"]
        for spec in load_table(table):
            lines.append(f"| `{spec.name}`{' (read-only)' if spec.read_only else ''} | "
                         f"{spec.type} | {_default_text(spec)} | {rules_text(spec)} | "
                         f"{spec.description} |")
    return "\n".join(lines) + "\n"


def _default_text(spec: ParameterSpec) -> str:
    if spec.robot_default:
        return spec.robot_default
    if isinstance(spec.default, str):
        return f'`"{spec.default}"`'
    return f"`{yaml.safe_dump(spec.default, default_flow_style=True).strip()}`".replace(
        "\n...", "")


def rules_text(spec: ParameterSpec) -> str:
    words = []
    for key, args in spec.validation.items():
        name = key.removesuffix("<>")
        if args is None or args == []:
            words.append(name)
        elif name in ("one_of",):
            words.append(f"{name} {', '.join(map(str, args[0]))}")
        else:
            words.append(f"{name} {', '.join(f'{a:g}' for a in args)}")
    return "; ".join(words)


def main(argv=None) -> int:
    """Print the parameter reference, or write it to doc/parameters.md (``--write``)."""
    from .kinds import NODE_TYPES, NodeDescription
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--write", metavar="PATH", nargs="?", const="doc/parameters.md",
                        help="write the page to PATH (default doc/parameters.md)")
    args = parser.parse_args(argv)
    text = markdown({kind: (t.executable, NodeDescription(kind, t.executable, kind, "/")
                            .node_class().PARAMETER_TABLES) for kind, t in NODE_TYPES.items()})
    if args.write:
        Path(args.write).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
