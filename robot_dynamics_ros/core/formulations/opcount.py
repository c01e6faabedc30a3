"""
Counting the arithmetic a formulation performs, by running it on a counting scalar.

Every formulation in this package is written once, on numpy arrays whose entries may be any
number-like objects.  Run on :class:`Counted` entries (numpy ``object`` arrays), the same code
computes the same torque while each ``*`` and ``+``/``-`` between values that depend on
``(q, qd, qdd)`` (or on the wrench) is tallied.

What is counted, and what is not (the source texts count the same way, Milićević et al., Table 3
and Turney et al. 1980, Tables 1-4):

* robot constants (DH parameters, masses, first and second moments, products of them) are plain
  floats: arithmetic among them is precomputation and is free;
* multiplying by an exact 0 or +-1 and adding an exact 0 are free (folded away), so structural
  zeros of the algorithm (z0 = (0, 0, 1), the last row of a homogeneous matrix, the base at rest,
  zero DH parameters of a particular robot) cost nothing, as in Renaud's "analytical" principle
  (Renaud 1987, introduction).  A sign change is free (Turney et al. 1980, Table 2 does not
  count the Q matrices);
* sines and cosines of the joint angles are tallied separately (``trig``); the source texts leave
  them out.

The counts are therefore those of *this code* with constant folding; they are not hand-optimised.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np


@dataclass
class OpCount:
    """
    Operations of a computation: the one count of the package (formulations and code generator).

    Negations are free; sines and cosines, signs and divisions are counted apart from the
    multiplications and additions (subtractions are additions).  ``mul``, ``add``, ``div`` and
    ``trig`` are the short names the formulations' tables use.
    """

    multiplications: int = 0
    additions: int = 0
    sin_cos: int = 0
    signs: int = 0
    divisions: int = 0

    @property
    def mul(self) -> int:
        return self.multiplications

    @property
    def add(self) -> int:
        return self.additions

    @property
    def div(self) -> int:
        return self.divisions

    @property
    def trig(self) -> int:
        return self.sin_cos

    def as_dict(self) -> dict:
        out = {"multiplications": self.multiplications, "additions": self.additions,
               "sin_cos": self.sin_cos, "signs": self.signs}
        if self.divisions:
            out["divisions"] = self.divisions
        return out

    def __str__(self) -> str:
        text = f"{self.multiplications} multiplications, {self.additions} additions"
        extra = [f"{self.sin_cos} sin/cos"] if self.sin_cos or self.signs else []
        extra += [f"{self.signs} sign"] if self.signs else []
        extra += [f"{self.divisions} divisions"] if self.divisions else []
        return text + (f" ({', '.join(extra)})" if extra else "")


_active: list[OpCount] = []


def _tally(kind: str) -> None:
    for counter in _active:
        setattr(counter, kind, getattr(counter, kind) + 1)


def _is_constant(x) -> bool:
    return isinstance(x, (int, float, np.floating, np.integer)) and not isinstance(x, bool)


class Counted:
    """A float that depends on the joint state; arithmetic on it is counted (see module doc)."""

    __slots__ = ("value",)

    def __init__(self, value: float):
        self.value = float(value)

    # -- products ----------------------------------------------------------------------------
    def __mul__(self, other):
        if isinstance(other, Counted):
            _tally("multiplications")
            return Counted(self.value * other.value)
        if not _is_constant(other):
            return NotImplemented
        if other == 0:
            return 0.0
        if other == 1:
            return self
        if other == -1:
            return Counted(-self.value)
        _tally("multiplications")
        return Counted(self.value * other)

    __rmul__ = __mul__

    def __truediv__(self, other):
        if isinstance(other, Counted):
            _tally("divisions")
            return Counted(self.value / other.value)
        if not _is_constant(other):
            return NotImplemented
        return self * (1.0 / other)

    def __rtruediv__(self, other):
        if not _is_constant(other):
            return NotImplemented
        if other == 0:
            return 0.0
        _tally("divisions")
        return Counted(other / self.value)

    # -- sums --------------------------------------------------------------------------------
    def __add__(self, other):
        if isinstance(other, Counted):
            _tally("additions")
            return Counted(self.value + other.value)
        if not _is_constant(other):
            return NotImplemented
        if other == 0:
            return self
        _tally("additions")
        return Counted(self.value + other)

    __radd__ = __add__

    def __sub__(self, other):
        if isinstance(other, Counted):
            _tally("additions")
            return Counted(self.value - other.value)
        if not _is_constant(other):
            return NotImplemented
        return self + (-other)

    def __rsub__(self, other):
        if not _is_constant(other):
            return NotImplemented
        return (-self) + other

    def __neg__(self):
        return Counted(-self.value)

    def __pos__(self):
        return self

    # -- functions numpy calls on object arrays (np.cos(a) -> a.cos()) -----------------------
    def cos(self):
        _tally("sin_cos")
        return Counted(np.cos(self.value))

    def sin(self):
        _tally("sin_cos")
        return Counted(np.sin(self.value))

    def __repr__(self) -> str:
        return f"Counted({self.value!r})"


def counted_array(values) -> np.ndarray:
    """Return an object array of :class:`Counted` entries with these values."""
    values = np.asarray(values, dtype=float)
    out = np.empty(values.shape, dtype=object)
    for index, v in np.ndenumerate(values):
        out[index] = Counted(v)
    return out


def value_of(x):
    """Float value(s) of a result that may hold Counted entries or folded constants."""
    if isinstance(x, np.ndarray) and x.dtype == object:
        return np.vectorize(value_of, otypes=[float])(x)
    if isinstance(x, (list, tuple)):
        return np.array([value_of(v) for v in x])
    return x.value if isinstance(x, Counted) else float(x)


@contextlib.contextmanager
def counting():
    """
    Tally the operations on Counted values into a counter.

    ``with counting() as c: ...`` tallies them into ``c``.
    """
    counter = OpCount()
    _active.append(counter)
    try:
        yield counter
    finally:
        _active.remove(counter)
