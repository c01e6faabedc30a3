"""
Matching joint vectors by name: the one place where a list of names is mapped onto a joint order.

A message, a service request, a trajectory or a parameter lists joints in its own order; the
algorithms want the model's order.  :func:`joint_index` returns the index that picks the wanted
joints out of the given list (``given_vector[index]`` is in the wanted order), or raises
:class:`~robot_dynamics_ros.core.errors.InputError` naming what is wrong: a joint listed twice,
a wanted joint missing, or (unless ``allow_extra``) a joint that is not wanted.

The work is O(N) in the length of either list (one dict built, one look-up per name), so a
message naming 100,000 joints costs milliseconds, not the minutes of list look-ups in a loop; and
error messages show at most :data:`SHOWN_NAMES` names (:func:`shown`), so such a message cannot
write a megabyte of log.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from .errors import InputError

SHOWN_NAMES = 8             # names shown in one error message; the rest are counted
SHOWN_NAME_CHARS = 64       # characters shown of one name


def shown(names: Sequence, limit: int = SHOWN_NAMES) -> str:
    """``names`` as a list for a message: at most ``limit`` names, each cut to a sane length."""
    items = []
    for name in list(names[:limit]):
        text = str(name)
        if len(text) > SHOWN_NAME_CHARS:
            text = text[:SHOWN_NAME_CHARS] + "..."
        items.append(repr(text))
    more = len(names) - limit
    return "[" + ", ".join(items) + (f", ... ({more} more)" if more > 0 else "") + "]"


def joint_index(wanted: Sequence[str], given: Sequence[str], what: str,
                allow_extra: bool = True) -> np.ndarray:
    """
    Find each ``wanted`` joint in ``given``: ``given_vector[index]`` is in the ``wanted`` order.

    ``wanted`` names each joint once (a model's order); ``given`` is the list to check, named
    ``what`` in errors (e.g. ``'joint_states: name'``).  ``allow_extra``: whether ``given`` may
    list joints that are not wanted (a gripper in joint_states) or must name exactly the wanted
    ones (then the result is a permutation; :func:`inverse` maps the other way).  Raises
    InputError naming repeated, missing and unknown joints.
    """
    position: dict[str, int] = {}
    repeated = []
    for i, name in enumerate(given):
        if position.setdefault(name, i) != i:
            repeated.append(name)
    problems = []
    if repeated:
        also = f" (also repeated: {shown(repeated[1:])})" if len(repeated) > 1 else ""
        problems.append(f"joint {shown(repeated[:1])[1:-1]} appears twice{also}")
    missing = [name for name in wanted if name not in position]
    if missing:
        problems.append(f"missing joint(s) {shown(missing)}")
    if not allow_extra and len(position) > len(wanted) - len(missing):
        wanted_set = set(wanted)
        unknown = [name for name in position if name not in wanted_set]
        problems.append(f"unknown joint(s) {shown(unknown)}")
    if problems:
        raise InputError(f"{what}: " + ", ".join(problems) + f"; expected {shown(wanted)}"
                         + ("" if allow_extra else " each once"))
    return np.fromiter((position[name] for name in wanted), dtype=np.intp, count=len(wanted))


def inverse(permutation: np.ndarray) -> np.ndarray:
    """Invert a permutation: indexing with it and then with the result restores the order."""
    out = np.empty_like(permutation)
    out[permutation] = np.arange(permutation.size)
    return out
