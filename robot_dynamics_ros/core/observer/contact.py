"""
Contact detection on the momentum residual: per-joint thresholds with hysteresis.

Haddadin et al. ("Robot Collisions: A Survey on Detection, Isolation, and Identification", IEEE
T-RO 33(6), 2017, Sect. IV-A) detect a collision when a residual leaves a band around zero.  Here
contact rises when any joint's |r_i| exceeds its threshold h_i, and falls only when every |r_i|
is below ``release_ratio`` h_i: the hysteresis keeps a residual hovering at the threshold from
toggling the output.

Latency.  For a step of the external torque of size A on joint i at time 0 (and nothing else),
the discrete residual is r_i = A (1 - exp(-k_i t)) at the sample times (``momentum_observer``,
eq. 3), so contact rises at the first sample after

    t_h = -ln(1 - h_i / |A|) / k_i      (|A| > h_i; never for |A| <= h_i),

i.e. within t_h plus one sampling interval (:func:`detection_latency`): ln 2 / k_i + h for a step
of twice the threshold, 5 / k_i when the threshold is 99.3 % of the step.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import InputError


def detection_latency(step: float, threshold: float, gain: float, interval: float = 0.0) -> float:
    """
    Return the longest time from a step of the external torque to contact (see above).

    ``step``: |A| on one joint; ``threshold``: h on that joint; ``gain``: its k_i [1/s];
    ``interval``: the sampling interval.  math.inf when |A| <= h (never detected).
    """
    if abs(step) <= threshold:
        return math.inf
    return -math.log(1.0 - threshold / abs(step)) / gain + interval


class ContactDetector:
    """Contact from residuals: per-joint ``thresholds`` (> 0) and a ``release_ratio`` in (0, 1]."""

    def __init__(self, thresholds, release_ratio: float = 0.5):
        h = np.asarray(thresholds, dtype=float).reshape(-1)
        if h.size == 0 or not np.isfinite(h).all() or (h <= 0.0).any():
            raise InputError(f"thresholds: expected finite values > 0 (one per joint), got "
                             f"{np.ravel(thresholds).tolist()}")
        if not (0.0 < release_ratio <= 1.0):
            raise InputError(f"release_ratio: expected a value in (0, 1], got {release_ratio!r}")
        self.thresholds = tuple(h.tolist())
        self.release = tuple((release_ratio * h).tolist())
        self.release_ratio = float(release_ratio)
        self.contact = False
        self.rises = 0                  # how often contact rose so far

    def update(self, residual) -> bool:
        """Take one residual (n floats); return whether there is contact now."""
        if self.contact:
            self.contact = any(abs(r) >= lo for r, lo in zip(residual, self.release))
        else:
            self.contact = any(abs(r) > hi for r, hi in zip(residual, self.thresholds))
            self.rises += self.contact
        return self.contact

    def update_many(self, residuals) -> np.ndarray:
        """Take residuals (N, n) in order; return contact (N,) after each."""
        return np.array([self.update(r) for r in np.asarray(residuals).tolist()], dtype=bool)

    def above(self, residual) -> list:
        """Return the indices of the joints whose |r_i| exceeds their threshold."""
        return [i for i, (r, hi) in enumerate(zip(residual, self.thresholds)) if abs(r) > hi]
