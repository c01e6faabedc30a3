"""
The nodes' parameter tables: the format, the checks, the generated reference page.

* doc/parameters.md is what ``python -m robot_dynamics_ros.nodes.parameter_table`` writes from
  the tables (so the page cannot drift from what the nodes declare);
* each rule of generate_parameter_library's format that the tables use refuses what it should,
  naming the parameter;
* the tables' choices are the code's (modes, policies, methods, integrators);
* a malformed table is refused naming the file and parameter.
"""
import math

import pytest

from locations import REPO
from robot_dynamics_ros.nodes.bringup import NODE_TYPES, NodeDescription
from robot_dynamics_ros.nodes import parameter_table
from robot_dynamics_ros.nodes.parameter_table import (ParameterSpec, TableError, check,
                                                      load_table, load_tables, markdown)


def _node_tables() -> dict:
    return {kind: (t.executable, NodeDescription(kind, t.executable, kind, "/")
                   .node_class().PARAMETER_TABLES) for kind, t in NODE_TYPES.items()}


def test_committed_reference_page_is_the_generated_one():
    committed = (REPO / "doc" / "parameters.md").read_text()
    assert committed == markdown(_node_tables()), \
        "doc/parameters.md is stale: run python -m robot_dynamics_ros.nodes.parameter_table " \
        "--write"


def test_every_node_table_loads_and_no_parameter_is_declared_twice():
    for kind, (_, tables) in _node_tables().items():
        specs = load_tables(tables)
        assert tables[0] == "common" and specs, kind
        for spec in specs:
            assert spec.description, spec.name
            assert (spec.default is None) == bool(spec.robot_default), spec.name


def test_table_choices_are_the_codes():
    from robot_dynamics_ros.core.control import MODES, POLICIES
    from robot_dynamics_ros.core.simulation import INTEGRATORS
    from robot_dynamics_ros.nodes.trajectory_scaler import METHODS

    def choices(table, name):
        spec, = [s for s in load_table(table) if s.name == name]
        return tuple(spec.validation["one_of<>"][0])
    assert choices("inverse_dynamics", "mode") == MODES
    assert choices("torque_outputs", "effort_limit_policy") == POLICIES
    assert choices("trajectory_scaler", "method") == METHODS
    assert choices("simulator", "integrator") == INTEGRATORS


def test_computed_torque_gain_defaults_are_the_cores():
    """inverse_dynamics' kp / kd defaults are core.control's (bag process takes those)."""
    from robot_dynamics_ros.core.control import DEFAULT_KD, DEFAULT_KP
    defaults = {s.name: s.default for s in load_table("inverse_dynamics")}
    assert list(defaults["kp"]) == [DEFAULT_KP] and list(defaults["kd"]) == [DEFAULT_KD]


def _spec(kind, **validation):
    return ParameterSpec("p", kind, None, "d", validation=validation)


@pytest.mark.parametrize("spec, value, words", [
    (_spec("double", **{"bounds<>": [0.0, 1.0]}), 1.5, r"p: 1.5 is outside \[0, 1\]"),
    (_spec("double", **{"gt<>": [0.0], "lt_eq<>": [1.0]}), 0.0, "p: expected > 0"),
    (_spec("double", **{"gt<>": [0.0], "lt_eq<>": [1.0]}), 1.01, "p: expected <= 1"),
    (_spec("double"), math.nan, "p: nan is not a finite number"),
    (_spec("double"), "1.0", "p: expected a float"),
    (_spec("int"), 1.0, "p: expected a int"),
    (_spec("bool"), 1, "p: expected a bool"),
    (_spec("string", **{"one_of<>": [["a", "b"]]}), "c", "p: 'c' is not one of"),
    (_spec("double_array", **{"fixed_size<>": [3]}), [1.0, 2.0], "exactly 3 values, got 2"),
    (_spec("double_array", **{"not_empty<>": None}), [], "at least one value"),
    (_spec("double_array", **{"element_bounds<>": [-1.0, 1.0]}), [0.0, 2.0],
     r"p\[1\]: 2.0 is outside \[-1, 1\]"),
    (_spec("double_array"), [0.0, math.inf], r"p\[1\]: inf is not a finite number"),
    (_spec("string_array", **{"unique<>": None}), ["a", "b", "a"], "values repeated"),
    (_spec("double_array"), "1,2", "expected a list"),
])
def test_rules_refuse_naming_the_parameter(spec, value, words):
    with pytest.raises(ValueError, match=words):
        check(spec, value)


def test_rules_accept_what_they_should():
    check(_spec("double", **{"bounds<>": [0.0, 1.0]}), 1)        # an int where a double goes
    check(_spec("double_array", **{"fixed_size<>": [3]}), [1, 2.5, 3])
    check(_spec("string", **{"one_of<>": [["a", "b"]]}), "b")
    check(_spec("double_array", **{"not_empty<>": None, "element_bounds<>": [0, 1]}), [0.0])


@pytest.mark.parametrize("text, words", [
    ("t:\n  p: {type: float, default_value: 1.0, description: d}\n", "type 'float'"),
    ("t:\n  p: {type: double, default_value: 1.0, description: d, validation: "
     "{between<>: [0, 1]}}\n", "unknown validators"),
    ("t:\n  p: {type: double, description: d}\n", "either default_value or robot_default"),
    ("t:\n  p: {type: double, default_value: 2.0, description: d, validation: "
     "{bounds<>: [0.0, 1.0]}}\n", "default: p: 2.0 is outside"),
    ("t:\n  p: {type: double, default_value: 1.0, units: m}\n", "unknown keys"),
    ("other:\n  p: {type: double, default_value: 1.0}\n", "one top-level key 't'"),
])
def test_malformed_tables_are_refused_by_file_and_name(tmp_path, monkeypatch, text, words):
    monkeypatch.setattr(parameter_table, "TABLE_DIR", tmp_path)
    load_table.cache_clear()
    (tmp_path / "t.yaml").write_text(text)
    try:
        with pytest.raises(TableError, match=words):
            load_table("t")
    finally:
        load_table.cache_clear()


def test_nested_mappings_make_dotted_names():
    names = [s.name for s in load_table("common")]
    assert {"payload.mass", "payload.com", "payload.inertia", "gravity"} <= set(names)
    assert {"noise.position", "noise.seed"} <= {s.name for s in load_table("simulator")}
