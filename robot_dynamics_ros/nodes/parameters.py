"""
Parameters of a node: declaration with descriptors (description, range, read-only) and validation.

:class:`NodeParameters` declares each parameter with a ParameterDescriptor whose
FloatingPointRange / IntegerRange carries its admissible range, so ``ros2 param describe`` shows
it and rclpy refuses scalars outside it before anything else sees them.  rclpy ignores ranges on
arrays; for those (gains, payload CoM...) the range is checked here, element by element.

Changes that depend on several values (a payload is mass + CoM + inertia) are checked by hooks:
``hook(values) -> apply | None`` gets every parameter of the set *as it would be after the change*
and raises ValueError (or a core error) with the reason, which the caller of set_parameters
receives; nothing is applied unless every hook accepts.  Hooks also run once when registered, so
a bad initial value stops the node with the reason.
"""
from __future__ import annotations

import math
from typing import Callable

from rcl_interfaces.msg import (FloatingPointRange, IntegerRange, ParameterDescriptor,
                                SetParametersResult)

Hook = Callable[[dict], "Callable[[], None] | None"]


def descriptor(description: str, read_only: bool = False, bounds: tuple | None = None,
               sample=None) -> ParameterDescriptor:
    """Make a ParameterDescriptor; ``bounds`` (low, high) become a range of ``sample``'s type."""
    d = ParameterDescriptor(description=description, read_only=read_only)
    if bounds is not None:
        low, high = bounds
        element = sample[0] if isinstance(sample, (list, tuple)) and sample else sample
        if isinstance(element, bool) or not isinstance(element, (int, float)):
            raise TypeError(f"bounds need a numeric parameter, got {sample!r}")
        if isinstance(element, int):
            d.integer_range = [IntegerRange(from_value=int(low), to_value=int(high), step=0)]
        else:
            d.floating_point_range = [FloatingPointRange(from_value=float(low),
                                                         to_value=float(high), step=0.0)]
        if isinstance(sample, (list, tuple)):         # rclpy checks ranges of scalars only
            d.additional_constraints = f"each element in [{low:g}, {high:g}]"
    return d


class NodeParameters:
    """The parameters a node declared through it, and the hooks that validate their changes."""

    def __init__(self, node):
        self._node = node
        self._bounds: dict[str, tuple | None] = {}
        self._hooks: list[Hook] = []
        node.add_on_set_parameters_callback(self._on_set_parameters)

    def declare(self, name: str, default, description: str, read_only: bool = False,
                bounds: tuple | None = None):
        """Declare ``name`` (value from overrides, else ``default``) and return its value."""
        self._check_elements(name, default, bounds)
        value = self._node.declare_parameter(
            name, default, descriptor(description, read_only, bounds, default)).value
        self._bounds[name] = bounds
        self._check_elements(name, value, bounds)
        return value

    def values(self) -> dict:
        """Get the current value of every parameter declared through this set."""
        return {name: self._node.get_parameter(name).value for name in self._bounds}

    def add_hook(self, hook: Hook):
        """Register ``hook`` (see the module docstring) and apply it to the current values."""
        self._hooks.append(hook)
        apply = hook(self.values())
        if apply is not None:
            apply()

    @staticmethod
    def _check_elements(name: str, value, bounds):
        if bounds is None or isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
            return                    # scalars: rclpy checks the descriptor's range
        low, high = bounds
        for i, v in enumerate(value):
            if not (isinstance(v, (int, float)) and math.isfinite(v) and low <= v <= high):
                raise ValueError(f"{name}: each value must be in [{low:g}, {high:g}], "
                                 f"got {v} at index {i}")

    def _on_set_parameters(self, params) -> SetParametersResult:
        ours = [p for p in params if p.name in self._bounds]
        if not ours:                  # e.g. use_sim_time, or a parameter being declared
            return SetParametersResult(successful=True)
        try:
            for p in ours:
                self._check_elements(p.name, p.value, self._bounds[p.name])
            values = self.values()
            values.update({p.name: p.value for p in ours})
            appliers = [hook(values) for hook in self._hooks]
        except (ValueError, TypeError) as exc:
            self._node.get_logger().warning(f"parameter change refused: {exc}")
            return SetParametersResult(successful=False, reason=str(exc))
        except Exception as exc:  # noqa: BLE001 -- a bad parameter must not crash the node
            return SetParametersResult(successful=False, reason=f"{type(exc).__name__}: {exc}")
        for apply in appliers:
            if apply is not None:
                apply()
        return SetParametersResult(successful=True)
