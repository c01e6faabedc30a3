"""robot-dynamics check <robot.yaml>: validate a robot file, print its joints, masses, limits."""
from __future__ import annotations

import warnings

import numpy as np

from ..core import gravity_torques
from .robot_argument import add_robot_argument, load_robot_with_report

HELP = ("validate a robot description (URDF or YAML path, or shipped name) and print its joints, "
        "masses and limits (for a URDF also what was merged into the chain or locked)")


def add_arguments(parser):
    add_robot_argument(parser)


def run(args) -> int:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model, report = load_robot_with_report(args)
    for line in report.lines() if report else ():
        print(line)
    for warning in caught:          # accepted quirks: inconsistent inertias
        print(f"warning: {warning.message}")
    print(f"{model.name}: {model.n} joints, {model.convention} DH, "
          f"gravity {model.gravity.tolist()} m/s^2")
    header = (f"{'joint':<16}{'type':<10}{'mass kg':>9}{'lower':>10}{'upper':>10}{'velocity':>10}"
              f"{'effort':>10}{'rotor':>11}{'gear':>10}  units (limits, velocity, effort)")
    print(header)
    for i, name in enumerate(model.joint_names):
        units = "m, m/s, N" if model.joint_types[i] == "prismatic" else "rad, rad/s, N m"
        unknown = model.unknown_limits.get(name, ())

        def shown(kind, value):
            return f"{'unknown':>10}" if kind in unknown else f"{value:>10.4g}"
        lower, upper = (shown("position", model.lower[i]), shown("position", model.upper[i])) \
            if model.joint_types[i] != "continuous" else (f"{'none':>10}", f"{'none':>10}")
        print(f"{name:<16}{model.joint_types[i]:<10}{model.mass[i]:>9.4g}{lower}"
              f"{upper}{shown('velocity', model.velocity_limit[i])}"
              f"{shown('effort', model.effort_limit[i])}"
              f"{model.rotor_inertia[i]:>11.3g}{model.gear_ratio[i]:>10.4g}  {units}")
    print(f"total mass {model.mass.sum():.4g} kg"
          + (f" (payload {model.payload['mass']} kg)" if model.payload else ""))
    q_mid = np.clip(np.zeros(model.n), model.lower, model.upper)
    print("gravity torques at q = 0 (clipped to limits):",
          np.array2string(gravity_torques(model, q_mid), precision=4))
    if model.unknown_limits:
        print("unknown limits (absent, 0 or not finite in the description; what needs one "
              "refuses): " + ", ".join(f"{joint}: {' '.join(kinds)}"
                                       for joint, kinds in model.unknown_limits.items()))
    offsets = {name: e for name, e in zip(model.joint_names, model.chain.e_prev) if e != 0.0}
    if offsets:                     # rows that are not plain modified DH (axes_to_dh.py)
        print("joint offsets beyond modified DH (almost parallel axes: the frame before stays at "
              "its joint origin): " + ", ".join(f"{joint}: e = {e:.6g} m"
                                                for joint, e in offsets.items()))
    for i in model.coupled_drives:      # (core/model/coupling.py)
        row = zip(model.coupling[i], model.joint_names)
        moved = " + ".join(f"{k:g} {joint}" for k, joint in row if k != 0.0)
        print(f"coupled drive of {model.joint_names[i]}: motor position = "
              f"{model.gear_ratio[i]:g} x ({moved})")
    print("OK")
    return 0
