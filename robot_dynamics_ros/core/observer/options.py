"""
The external-torque observer's settings (``momentum_observer.py`` says what each does).

A module of its own so that reading them (the command line's `bag` parser, its defaults) does
not import the dynamics, nor numpy.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import InputError

EFFORT_TIMINGS = ("sample", "interval")


@dataclass(frozen=True)
class ObserverOptions:
    """
    The observer's settings (``momentum_observer.py``'s docstring says what they do).

    ``gains`` K_O per joint, or one for all [1/s] (the filter's bandwidth in rad/s: 5 / K_O s
    to within 1 % of a step); ``effort_timing`` "sample"
    or "interval"; ``friction``: subtract the model's friction; ``static_velocity`` [rad/s or m/s]:
    a joint slower than this at either end of an interval is not known to slide (its Coulomb
    friction is in the band); ``max_interval`` [s]: a longer interval between two samples
    restarts the observer (r = 0 from the later sample on, as at the first one: the integral
    over such a gap would not be accurate).
    """

    gains: tuple | float = 50.0
    effort_timing: str = "sample"
    friction: bool = True
    static_velocity: float = 0.01
    max_interval: float = 0.1

    def checked(self, model) -> "ObserverOptions":
        """Return these options with gains as a tuple of n floats; InputError naming the field."""
        import numpy as np          # (here: the command line's parser reads the defaults alone)
        gains = np.asarray(self.gains, dtype=float)
        if gains.ndim == 0:
            gains = np.full(model.n, float(gains))
        if gains.shape != (model.n,) or not np.isfinite(gains).all() or (gains <= 0.0).any():
            raise InputError(f"gains: expected {model.n} finite values > 0 (K_O per joint, "
                             f"1/s) for robot '{model.name}', got {np.ravel(self.gains).tolist()}")
        if self.effort_timing not in EFFORT_TIMINGS:
            raise InputError(f"effort_timing: '{self.effort_timing}' is not one of "
                             f"{list(EFFORT_TIMINGS)}")
        if not (math.isfinite(self.static_velocity) and self.static_velocity >= 0.0):
            raise InputError(f"static_velocity: expected a finite value >= 0, got "
                             f"{self.static_velocity!r}")
        if not (self.max_interval > 0.0):
            raise InputError(f"max_interval: expected a value > 0, got {self.max_interval!r}")
        return ObserverOptions(tuple(gains.tolist()), self.effort_timing, bool(self.friction),
                               float(self.static_velocity), float(self.max_interval))
