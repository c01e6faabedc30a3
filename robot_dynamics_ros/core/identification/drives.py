"""
Motor currents as efforts: the drive gain of each joint, torque = gear ratio x K_t x current.

Many robots log motor currents, not joint torques: the ``effort`` of their joint states holds
amperes.  A joint's torque (joint side) is its drive gain times the current, the gain being the
gear ratio times the motor's torque constant K_t (N m/A, motor side).  The gains come from

* per-joint torque constants (one value for all joints, or one per joint), multiplied by the
  robot file's gear ratios (1 where the file gives no motor), or
* a YAML file with one entry per joint, by joint name: a number (the drive gain itself, joint
  side N m/A or N/A), or a mapping ``{torque_constant: K_t, gear_ratio: k_r}`` (``gear_ratio``
  defaulting to the robot file's) or ``{drive_gain: G}``.

Example, the UR10e of Mamedov et al.'s data set (drive gains identified with a known load;
``effort`` in A)::

    shoulder_pan_joint: 10.0
    shoulder_lift_joint: 10.6956
    elbow_joint: {torque_constant: 0.0837, gear_ratio: 101}    # 8.4537 N m/A
    ...

A gear ratio given in the file is also the one identification uses for that joint's rotor when
the robot file has no motor there (:func:`DriveGains.gear_ratios`).  Where the robot file couples
drives (``coupling``, ``core/model/coupling.py``), effort column i is drive i's motor current and
the joint torques are K^T (gain x current).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..errors import InputError
from ..yaml_loader import load_yaml_file

MAX_FILE_BYTES = 1 << 16


class DriveGains(NamedTuple):
    """Per-joint drive gains (joint side, per ampere) and the gear ratios a file gave."""

    gains: np.ndarray
    gear_ratios: dict          # joint name -> gear ratio given in the drive-gain file
    source: str
    coupling: np.ndarray | None = None      # K of coupled drives (core/model/coupling.py)

    def torques(self, currents: np.ndarray) -> np.ndarray:
        """
        Return joint torques from currents (N, n): K^T (gain x current) with coupled drives.

        Column i of the currents is drive i's motor, whose torque acts on the joints through
        K^T (a wrist's motor 6 on joints 5 and 6); without a coupling, gain x current.
        """
        torques = np.asarray(currents, dtype=float) * self.gains
        return torques if self.coupling is None else torques @ self.coupling


def _value(x, where: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or x == 0:
        raise InputError(f"{where}: must be a non-zero finite number, got {x!r}")
    return float(x)


def gains_from_constants(model, constants) -> DriveGains:
    """Return the gains of per-joint torque constants (1 or n values) and the file's ratios."""
    k = np.array([_value(x, "--torque-constant") for x in constants], dtype=float)
    if k.size not in (1, model.n):
        raise InputError(f"--torque-constant: give 1 value or {model.n} (one per joint of "
                         f"'{model.name}': {', '.join(model.joint_names)}), got {k.size}")
    return DriveGains(np.broadcast_to(k, (model.n,)) * model.gear_ratio, {},
                      "torque constants x the robot file's gear ratios", _coupling(model))


def _coupling(model) -> np.ndarray | None:
    return model.coupling if model.has_coupling else None


def gains_from_file(model, path) -> DriveGains:
    """Return the gains of a drive-gain YAML file (module docstring); errors name the entry."""
    data = load_yaml_file(path, "drive gains", InputError, MAX_FILE_BYTES)
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a mapping of joint name to drive gain")
    unknown = sorted(set(map(str, data)) - set(model.joint_names))
    missing = [name for name in model.joint_names if name not in data]
    if unknown or missing:
        raise InputError(f"{path}: joints {unknown or missing} "
                         f"{'are not joints of' if unknown else 'missing; give all joints of'} "
                         f"'{model.name}' ({', '.join(model.joint_names)})")
    gains, ratios = np.zeros(model.n), {}
    for i, name in enumerate(model.joint_names):
        entry, where = data[name], f"{path}: {name}"
        if not isinstance(entry, dict):
            gains[i] = _value(entry, where)
            continue
        keys = set(entry)
        if keys == {"drive_gain"}:
            gains[i] = _value(entry["drive_gain"], f"{where}.drive_gain")
        elif "torque_constant" in keys and keys <= {"torque_constant", "gear_ratio"}:
            ratio = float(model.gear_ratio[i])
            if "gear_ratio" in entry:
                ratio = ratios[name] = _value(entry["gear_ratio"], f"{where}.gear_ratio")
            gains[i] = ratio * _value(entry["torque_constant"], f"{where}.torque_constant")
        else:
            raise InputError(f"{where}: expected a number, {{drive_gain: G}} or {{torque_constant:"
                             f" K, gear_ratio: N}}, got keys {sorted(map(str, keys))}")
    return DriveGains(gains, ratios, str(path), _coupling(model))
