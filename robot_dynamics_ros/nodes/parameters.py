"""
Parameters of a node: declared from its tables (``nodes/params``), checked, and validated as a set.

:class:`NodeParameters` declares every parameter of a node's tables
(:mod:`~robot_dynamics_ros.nodes.parameter_table`) with a ParameterDescriptor: description,
read-only, and the range (FloatingPointRange / IntegerRange) of a ``bounds<>`` rule, so that
``ros2 param describe`` shows it and rclpy refuses scalars outside it; every rule of the table
(array sizes and element bounds, one_of, strict bounds...) is checked here, at declaration and
at every change.  A parameter with ``robot_default`` is declared unset and given the robot's
value by :meth:`NodeParameters.set_robot_defaults` when the node has its robot; it keeps
following the robot (a new robot from ``/robot_description`` brings its own) until someone sets
it: :meth:`NodeParameters.values` gives None for a parameter that holds the robot's value.

Changes that depend on several values (a payload is mass + CoM + inertia) are checked by hooks:
``hook(values) -> apply | None`` gets every parameter of the set *as it would be after the change*
(None for one still unset) and raises ValueError (or a core error) with the reason, which the
caller of set_parameters receives; nothing is applied unless every hook accepts.  Hooks also run
once when registered, so a bad initial value stops the node (or its configuration) with the
reason.
"""
from __future__ import annotations

from typing import Callable

from rcl_interfaces.msg import (FloatingPointRange, IntegerRange, ParameterDescriptor,
                                SetParametersResult)
from rclpy.exceptions import ParameterUninitializedException
from rclpy.parameter import Parameter

from .parameter_table import ParameterSpec, rules_text, check, load_tables

Hook = Callable[[dict], "Callable[[], None] | None"]
_ROS_TYPES = {"bool": Parameter.Type.BOOL, "int": Parameter.Type.INTEGER,
              "double": Parameter.Type.DOUBLE, "string": Parameter.Type.STRING,
              "bool_array": Parameter.Type.BOOL_ARRAY, "int_array": Parameter.Type.INTEGER_ARRAY,
              "double_array": Parameter.Type.DOUBLE_ARRAY,
              "string_array": Parameter.Type.STRING_ARRAY}


def descriptor(spec: ParameterSpec) -> ParameterDescriptor:
    """Make the ParameterDescriptor of ``spec``: description, read-only, range, rules in words."""
    d = ParameterDescriptor(description=spec.description, read_only=spec.read_only,
                            additional_constraints=rules_text(spec))
    bounds = spec.bounds()
    if bounds is not None:
        low, high = bounds
        if spec.element_type is int:
            d.integer_range = [IntegerRange(from_value=int(low), to_value=int(high), step=0)]
        else:
            d.floating_point_range = [FloatingPointRange(from_value=float(low),
                                                         to_value=float(high), step=0.0)]
    return d


def _typed_default(spec: ParameterSpec):
    """Return the default as its type declares it (floats for doubles), or None (unset)."""
    value = spec.default
    if value is not None and spec.element_type is float:
        value = [float(v) for v in value] if spec.is_array else float(value)
    return value


class NodeParameters:
    """The parameters a node declared through its tables, and the hooks that validate changes."""

    def __init__(self, node):
        self._node = node
        self.specs: dict[str, ParameterSpec] = {}
        self._hooks: list[Hook] = []
        self.from_robot: set[str] = set()       # parameters that hold the robot's value
        self._setting_robot_defaults = False
        node.add_on_set_parameters_callback(self._on_set_parameters)

    def declare_tables(self, tables) -> dict:
        """Declare every parameter of ``tables`` (values from overrides); return the values."""
        for spec in load_tables(tables):
            default, d = _typed_default(spec), descriptor(spec)
            # rclpy types a parameter by its default, which an empty list does not have (it
            # would be a byte array): such a parameter is dynamically typed for rclpy, and its
            # type is checked here (check) like every other rule
            d.dynamic_typing = default == []
            self._node.declare_parameter(
                spec.name, _ROS_TYPES[spec.type] if default is None else default, d)
            value = self._value(spec.name)
            if value is not None:
                check(spec, value)
            self.specs[spec.name] = spec
        return self.values()

    def _value(self, name: str):
        try:
            return self._node.get_parameter(name).value
        except ParameterUninitializedException:
            return None

    def values(self) -> dict:
        """Get the value of every parameter of the tables (None: unset, or the robot's)."""
        return {name: None if name in self.from_robot else self._value(name)
                for name in self.specs}

    def set_robot_defaults(self, values: dict):
        """Give the parameters of ``values`` that are unset or the robot's the robot's values."""
        robot = [Parameter(name, _ROS_TYPES[self.specs[name].type], value)
                 for name, value in values.items()
                 if name in self.from_robot or self._value(name) is None]
        if not robot:
            return
        self._setting_robot_defaults = True
        try:
            results = self._node.set_parameters(robot)
        finally:
            self._setting_robot_defaults = False
        refused = [r.reason for r in results if not r.successful]
        if refused:
            raise ValueError("; ".join(refused))
        self.from_robot.update(p.name for p in robot)

    def add_hook(self, hook: Hook):
        """Register ``hook`` (see the module docstring) and apply it to the current values."""
        self._hooks.append(hook)
        apply = hook(self.values())
        if apply is not None:
            apply()

    def _on_set_parameters(self, params) -> SetParametersResult:
        ours = [p for p in params if p.name in self.specs]
        if not ours:                  # e.g. use_sim_time, or a parameter being declared
            return SetParametersResult(successful=True)
        robot = self._setting_robot_defaults
        try:
            for p in ours:
                check(self.specs[p.name], p.value)
            values = self.values()
            values.update({p.name: None if robot else p.value for p in ours})
            appliers = [hook(values) for hook in self._hooks]
        except (ValueError, TypeError) as exc:
            self._node.get_logger().warning(f"parameter change refused: {exc}")
            return SetParametersResult(successful=False, reason=str(exc))
        except Exception as exc:  # noqa: BLE001 -- a bad parameter must not crash the node
            return SetParametersResult(successful=False, reason=f"{type(exc).__name__}: {exc}")
        for apply in appliers:
            if apply is not None:
                apply()
        if not robot:                 # set by someone: no longer the robot's
            self.from_robot.difference_update(p.name for p in ours)
        return SetParametersResult(successful=True)
