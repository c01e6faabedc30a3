"""
Effort limits on commanded torques: clamp (default), warn, or off; every excess counted per joint.

An actuator cannot give more than its effort limit, and a driver that receives more either
saturates silently or faults.  So a torque node never publishes a command above a joint's limit
unless told to: with ``clamp`` each joint's command is limited to [-limit, limit] (the joints are
clamped independently, as an amplifier saturates; the command's direction in joint space changes,
which is what saturation does to a real robot too); with ``warn`` it is published as computed and
counted; with ``off`` nothing is checked.  Counts per joint and the worst ratio |tau| / limit are
what the nodes report on ``/diagnostics`` and, once per second at most, in the log.

A joint whose effort limit is unknown (the description gives none, 0, or a value that is not
finite: ``RobotModel.unknown_limits``) cannot be clamped: ``clamp`` refuses such a model unless
the limit is given otherwise (the nodes' ``effort_limits`` parameter); ``warn`` leaves that joint
unchecked and says so.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import InputError

CLAMP, WARN, OFF = "clamp", "warn", "off"
POLICIES = (CLAMP, WARN, OFF)


def unknown_effort_limits(model, given=None) -> list[str]:
    """
    Return the joints whose effort limit is unknown, in the model's order.

    Unknown: absent, 0 or not finite in the description (``RobotModel.unknown_limits``), unless
    ``given`` (per-joint limits in the model's order; 0 = the model's) gives one.
    """
    limits = effective_limits(model, given)
    return [name for name, limit in zip(model.joint_names, limits.tolist()) if not _known(limit)]


def _known(limit) -> bool:
    return math.isfinite(limit) and limit > 0.0


def effective_limits(model, given=None) -> np.ndarray:
    """Return the model's effort limits (model order), the ``given`` values > 0 instead."""
    own = np.asarray(model.effort_limit, dtype=float)
    if given is None:
        return own.copy()
    given = np.asarray(given, dtype=float)
    if given.shape != own.shape:
        raise InputError(f"effort_limits: expected {own.size} values (one per joint), got "
                         f"{given.size}")
    return np.where(given > 0.0, given, own)


@dataclass(frozen=True)
class LimitReport:
    """Commands above the effort limits: since the start (per joint) and since the last report."""

    counts: dict                # joint -> commands above its limit since the start
    new: int                    # joint commands above a limit since the last report
    worst_ratio: float          # max |tau| / limit since the last report (0: none above)
    worst_joint: str            # where it was ('' if none)


class EffortLimiter:
    """
    Applies an effort-limit policy to commands of one model (``limits`` in the model's order).

    :meth:`apply` is the per-message path (a list in, a list out; no numpy, ~1 us for 7
    joints when nothing exceeds); :meth:`apply_array` does the same to (N, n) arrays.  Not
    thread-safe: one node's commands come from one thread.
    """

    def __init__(self, limits, joint_names, policy: str = CLAMP):
        if policy not in POLICIES:
            raise InputError(f"effort_limit_policy: '{policy}' is not one of {list(POLICIES)}")
        limits = np.asarray(limits, dtype=float).reshape(-1)
        self.joint_names = tuple(joint_names)
        if limits.size != len(self.joint_names):
            raise InputError(f"effort limits: {limits.size} values for "
                             f"{len(self.joint_names)} joints")
        unknown = [name for name, limit in zip(self.joint_names, limits.tolist())
                   if not _known(limit)]
        if policy == CLAMP and unknown:
            raise InputError(f"effort_limit_policy 'clamp': the effort limit of joint "
                             f"'{unknown[0]}' is unknown (the description gives none, 0 or a "
                             "value that is not finite); give it in the effort_limits parameter "
                             "or choose 'warn' or 'off'")
        self.policy = policy
        self.unchecked = tuple(unknown)            # (warn: joints that cannot be checked)
        self.limits = np.where([_known(v) for v in limits.tolist()], limits, np.inf)
        self._limits = self.limits.tolist()
        self.counts = [0] * len(self._limits)
        self._new = 0
        self._worst = (0.0, -1)                    # (ratio, joint) since the last report

    def apply(self, tau: list) -> list:
        """Return the command to publish for ``tau`` (model order), counting what exceeds."""
        if self.policy == OFF:
            return tau
        for t, limit in zip(tau, self._limits):
            if not -limit <= t <= limit:
                return self._exceeded(tau)
        return tau

    def _exceeded(self, tau: list) -> list:
        out = list(tau)
        for j, (t, limit) in enumerate(zip(tau, self._limits)):
            if math.isfinite(t) and abs(t) > limit:       # (not finite: refused downstream)
                self.counts[j] += 1
                self._new += 1
                ratio = abs(t) / limit
                if ratio > self._worst[0]:
                    self._worst = (ratio, j)
                if self.policy == CLAMP:
                    out[j] = math.copysign(limit, t)
        return out

    def apply_array(self, tau: np.ndarray) -> np.ndarray:
        """:meth:`apply` on (N, n) (or (n,)) torques: an array (a copy when clamped)."""
        tau = np.asarray(tau, dtype=float)
        if self.policy == OFF or tau.size == 0:
            return tau
        with np.errstate(invalid="ignore"):
            over = np.isfinite(tau) & (np.abs(tau) > self.limits)
        if not over.any():
            return tau
        rows = over.reshape(-1, len(self._limits))
        for j, count in enumerate(rows.sum(axis=0).tolist()):
            self.counts[j] += count
        self._new += int(rows.sum())
        ratios = np.where(over, np.abs(tau) / self.limits, 0.0).reshape(rows.shape)
        k, j = np.unravel_index(np.argmax(ratios), ratios.shape)
        if ratios[k, j] > self._worst[0]:
            self._worst = (float(ratios[k, j]), int(j))
        if self.policy == CLAMP:
            return np.where(over, np.copysign(np.broadcast_to(self.limits, tau.shape), tau), tau)
        return tau

    def report(self) -> LimitReport:
        """Return the counts so far and the excesses since the last report; start anew."""
        ratio, j = self._worst
        report = LimitReport(dict(zip(self.joint_names, self.counts)), self._new, ratio,
                             self.joint_names[j] if j >= 0 else "")
        self._new, self._worst = 0, (0.0, -1)
        return report
