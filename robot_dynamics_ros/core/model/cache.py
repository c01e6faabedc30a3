"""
The one per-model cache of derived constants.

A :class:`~robot_dynamics_ros.core.model.RobotModel` is constant, so whatever an algorithm derives
from it alone (per-joint floats for the scalar recursions, the formulations' DH views, a compiled
generated model) can be computed once and reused.  Such values live here, keyed weakly by the
model, never on the model itself: the model stays the immutable object it was built as (as
Pinocchio keeps ``Model`` constant and puts derived values elsewhere), and a value disappears with
its model.
"""
from __future__ import annotations

import weakref
from typing import Callable, TypeVar

T = TypeVar("T")
_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def model_constant(model, key, build: Callable[[object], T]) -> T:
    """
    ``build(model)``, computed on the first call for this model and ``key`` and reused after.

    ``key`` (hashable, e.g. ``"joint_constants"``) names what is cached, one per kind of value.
    Two threads may both build a value the first time; both results are equal, one is kept.
    """
    entries = _CACHE.get(model)
    if entries is None:
        entries = _CACHE.setdefault(model, {})
    try:
        return entries[key]
    except KeyError:
        value = build(model)
        return entries.setdefault(key, value)
