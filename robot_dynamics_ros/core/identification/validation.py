"""
Validation of identified models on samples the fit did not see: per-joint torque errors.

For each joint: the RMS of the measured efforts, the RMS error of a model's prediction
(``predicted_effort``: ``rnea`` plus the torque offset), for the starting robot file ("before")
and the identified one ("after"), the relative error after / measured and the improvement
before / after.  :func:`holdout_mask` chooses the held-out share of a recording: the last
``share`` of each of ``BLOCKS`` equal stretches of time, so the held-out samples cover the whole
recording (every kind of motion in it) and are not the neighbours of training samples.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .parameters import predicted_effort

BLOCKS = 5


class ValidationReport(NamedTuple):
    """Per-joint torque errors of two models on one set of samples."""

    title: str
    joint_names: tuple
    samples: int
    measured_rms: np.ndarray      # RMS of the measured efforts
    before_rms: np.ndarray        # RMS error of the starting model
    after_rms: np.ndarray         # RMS error of the identified model

    @property
    def relative(self) -> np.ndarray:
        """Return the identified model's RMS error / RMS measured effort, per joint."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.after_rms / self.measured_rms

    @property
    def improvement(self) -> np.ndarray:
        """Return the starting model's RMS error / the identified model's, per joint."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.before_rms / self.after_rms

    def table(self) -> str:
        """Return the report as printed by ``robot-dynamics identify``."""
        lines = [f"{self.title} ({self.samples} samples), torque RMS [N m or N]:",
                 f"  {'joint':<20} {'measured':>10} {'file error':>11} {'identified':>11} "
                 f"{'relative':>9} {'improvement':>12}"]
        for k, name in enumerate(self.joint_names):
            lines.append(f"  {name:<20} {self.measured_rms[k]:10.4g} {self.before_rms[k]:11.4g} "
                         f"{self.after_rms[k]:11.4g} {100 * self.relative[k]:8.2f}% "
                         f"{self.improvement[k]:11.3g}x")
        return "\n".join(lines)


def rms(a) -> np.ndarray:
    """Return the RMS of each column."""
    return np.sqrt(np.mean(np.asarray(a) ** 2, axis=0))


def validation_report(title: str, before, after, data) -> ValidationReport:
    """Return the errors of the models ``before`` and ``after`` on ``data`` (q, qd, qdd, tau)."""
    q, qd, qdd, tau = data.q, data.qd, data.qdd, data.tau
    return ValidationReport(title, tuple(before.joint_names), int(q.shape[0]), rms(tau),
                            rms(tau - predicted_effort(before, q, qd, qdd)),
                            rms(tau - predicted_effort(after, q, qd, qdd)))


def holdout_mask(t, share: float, start: float | None = None,
                 end: float | None = None) -> np.ndarray:
    """
    Return which samples (stamps ``t``) are held out: the last ``share`` of each block.

    The blocks divide [start, end] (default: the first and last stamp) into ``BLOCKS`` equal
    stretches of time.
    """
    t = np.asarray(t, dtype=float)
    if share <= 0.0 or t.size == 0:
        return np.zeros(t.size, dtype=bool)
    start = float(t[0]) if start is None else float(start)
    end = float(t[-1]) if end is None else float(end)
    position = np.clip((t - start) / max(end - start, 1e-300), 0.0, 1.0) * BLOCKS
    phase = position - np.minimum(np.floor(position), BLOCKS - 1)
    return phase >= 1.0 - share
