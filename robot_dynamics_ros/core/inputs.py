"""
Checking the joint-space arguments of the algorithms, single or batched.

Every algorithm accepts either one configuration (shape (n,)) or a batch (shape (N, n)); the
results then have the leading dimension N.  Bad shapes and non-finite values raise ``InputError``
naming the argument, before anything is computed.
"""
from __future__ import annotations

import numpy as np

from .errors import InputError


def _real_array(value, name: str) -> np.ndarray:
    """``value`` as a float array; an InputError naming the argument if it is not real numbers."""
    if np.iscomplexobj(value):
        raise InputError(f"{name}: expected real numbers, got complex values")
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name}: expected an array of numbers ({exc})") from None


def joint_arrays(model, **arrays) -> tuple[list[np.ndarray], bool]:
    """
    Validate joint vectors (all (n,) or all (N, n)); returns (float arrays, batched?).

    ``None`` values are returned as zeros of the common shape.
    """
    out, shape = {}, None
    for name, value in arrays.items():
        if value is None:
            continue
        a = _real_array(value, name)
        if a.ndim not in (1, 2) or a.shape[-1] != model.n:
            raise InputError(f"{name}: expected shape ({model.n},) or (N, {model.n}) for robot "
                             f"'{model.name}', got {a.shape}")
        if shape is not None and a.shape != shape:
            raise InputError(f"{name}: shape {a.shape} does not match the other arguments' "
                             f"{shape}")
        if not np.isfinite(a).all():
            bad = np.argwhere(~np.isfinite(np.atleast_2d(a)))[0]
            raise InputError(f"{name}: non-finite value for joint '{model.joint_names[bad[-1]]}'")
        shape = a.shape
        out[name] = a
    if shape is None:
        raise InputError("no joint-space argument given")
    return [out.get(name, np.zeros(shape)) for name in arrays], len(shape) == 2


def vector_argument(value, size: int, name: str, batch_size: int | None) -> np.ndarray:
    """Return a (size,) vector, or (N, size) when batched, finite; raises InputError naming it."""
    a = _real_array(value, name)
    ok = a.shape == (size,) or (batch_size is not None and a.shape == (batch_size, size))
    if not ok:
        expected = f"({size},)" + (f" or ({batch_size}, {size})" if batch_size is not None else "")
        raise InputError(f"{name}: expected shape {expected}, got {a.shape}")
    if not np.isfinite(a).all():
        raise InputError(f"{name}: contains non-finite values")
    return a
