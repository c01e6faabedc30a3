"""
Identification on a real robot's recordings: the UR10e data set of Mamedov et al., by hand.

    .venv/bin/python doc/identification_ur10e.py CLONE [WORKDIR]

CLONE is a clone of github.com/shamilmamedov/dynamic_calibration (its recordings carry no
licence, so none of them is in this repository).  For each excitation recording of
``dataset_ur10e/identification_data`` (time, positions, velocities and motor currents at ~100 Hz,
jittered stamps) this script

1. writes a rosbag2 bag of sensor_msgs/JointState (effort = the motor currents, in A) and a
   drive-gain file from the data set's published gains (``UR10E_parameters.txt``: torque = gain x
   current);
2. runs ``robot-dynamics identify ur10e.urdf BAG --torque-constant gains.yaml -o ...`` (the
   currents' units are the only thing said; everything else at its default) and loads the file;
3. runs the same identification in Python to get its held-out samples, and compares, joint by
   joint, the torque RMS error of the identified file and of the data set's published model
   (its rigid-body parameters, reflected rotor inertias and friction F_v qd + F_c sgn(qd) + F_0,
   as ``validate_dynamic_params.m`` evaluates them) on those samples, and on the other
   recordings (each model on the same filtered samples).
"""
from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

from robot_dynamics_ros.bags import write_joint_states
from robot_dynamics_ros.core import RobotModel, rnea
from robot_dynamics_ros.core.identification import predicted_effort
from robot_dynamics_ros.core.identification.drives import gains_from_file
from robot_dynamics_ros.core.identification.pipeline import (IdentificationOptions, Recording,
                                                             identify_recordings,
                                                             prepare_validation)
from robot_dynamics_ros.core.identification.validation import rms

CLI = [sys.executable, "-m", "robot_dynamics_ros.commands.cli"]
LINKS = ["shoulder_link", "upper_arm_link", "forearm_link", "wrist_1_link", "wrist_2_link",
         "wrist_3_link"]
RECORDINGS = ["ur-20_02_10-30sec_12harm", "ur-20_02_12-40sec_12harm", "ur-20_02_12-50sec_12harm",
              "ur-20_02_19_14harm50sec", "ur-20_02_19_15harm50sec"]
VALIDATION = "ur-20_01_17-ptp_10_points"


def _published(clone: Path):
    text = (clone / "UR10E_parameters.txt").read_text()

    def values(name):
        return np.array([float(x) for x in re.search(name + r" = \[(.*?)\]", text,
                                                     re.S).group(1).split()])
    return (values("drvGains"), values("pi_rgd").reshape(6, 10), values("pi_drvs"),
            values("pi_frcn").reshape(6, 3))


def _with_inertials(urdf: str, rigid: np.ndarray) -> str:
    """Return the URDF with the published inertials (per link Ixx..Izz, h, m about its frame)."""
    for name, (ixx, ixy, ixz, iyy, iyz, izz, hx, hy, hz, m) in zip(LINKS, rigid):
        c = np.array([hx, hy, hz]) / m
        about_origin = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        at_com = about_origin - m * (c @ c * np.eye(3) - np.outer(c, c))
        numbers = [float(x) for x in (m, *c, at_com[0, 0], at_com[0, 1], at_com[0, 2],
                                      at_com[1, 1], at_com[1, 2], at_com[2, 2])]
        inertial = ('<inertial><mass value="%r"/><origin rpy="0 0 0" xyz="%r %r %r"/><inertia '
                    'ixx="%r" ixy="%r" ixz="%r" iyy="%r" iyz="%r" izz="%r"/></inertial>' %
                    tuple(numbers))
        urdf = re.sub(r'(<link name="%s">.*?)<inertial>.*?</inertial>' % name,
                      lambda match: match.group(1) + inertial, urdf, flags=re.S)
    return urdf


def _recording(clone: Path, name: str, gains) -> tuple[Recording, np.ndarray]:
    path = next(clone.glob(f"dataset_ur10e/*/{name}.csv"))
    data = np.loadtxt(path, delimiter=",")
    t = data[:, 0] - data[0, 0]
    return Recording(name, t, data[:, 1:7], data[:, 7:13], data[:, 13:19] * gains), data


def main() -> int:
    clone = Path(sys.argv[1])
    work = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(tempfile.mkdtemp(prefix="ur10e_"))
    work.mkdir(parents=True, exist_ok=True)
    gains, rigid, armature, friction = _published(clone)
    urdf_text = (clone / "URe/urdf/ur10e.urdf").read_text()
    urdf = work / "ur10e.urdf"
    urdf.write_text(urdf_text)
    model = RobotModel.from_urdf(urdf)
    (work / "gains.yaml").write_text("".join(f"{j}: {float(g)!r}\n"
                                             for j, g in zip(model.joint_names, gains)))
    drive = gains_from_file(model, work / "gains.yaml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # the published inertias are on the cone's edge
        published_rigid = RobotModel.from_urdf(_with_inertials(urdf_text, rigid),
                                               accept_inconsistent_inertia=True).rigid()

    def published(d):
        return (rnea(published_rigid, d.q, d.qd, d.qdd) + armature * d.qdd
                + friction[:, 0] * d.qd + friction[:, 1] * np.sign(d.qd) + friction[:, 2])

    recordings = {}
    for name in RECORDINGS + [VALIDATION]:
        rec, raw = _recording(clone, name, gains)
        recordings[name] = rec
        write_joint_states(work / name, model.joint_names, rec.t, rec.q, rec.qd, raw[:, 13:19])
    print("joint:", " ".join(f"{j:>10.10}" for j in model.joint_names))
    for name in RECORDINGS:
        out = work / f"{name}_identified.yaml"
        subprocess.run(CLI + ["identify", str(urdf), str(work / name), "--torque-constant",
                              str(work / "gains.yaml"), "-o", str(out), "--force"],
                       check=True, capture_output=True)
        identified = RobotModel.from_yaml(out)
        fit = identify_recordings(model, [recordings[name]],
                                  IdentificationOptions(gear_ratios=drive.gear_ratios))
        held = fit.held_out
        ours = rms(held.tau - predicted_effort(identified, held.q, held.qd, held.qdd))
        theirs = rms(held.tau - published(held))
        print(f"{name}: held-out {held.t.size} samples, cut-off {fit.cutoffs[0]:.3g} Hz")
        print("  identified RMS    " + " ".join(f"{x:10.3f}" for x in ours))
        print("  published RMS     " + " ".join(f"{x:10.3f}" for x in theirs))
        print("  ratio             " + " ".join(f"{x:10.3f}" for x in ours / theirs))
        factor = fit.check.factors[fit.check.chosen]
        others = [other for other in RECORDINGS + [VALIDATION] if other != name]
        ratios = []
        for other in others:
            d = prepare_validation(recordings[other], factor, IdentificationOptions())
            ratios.append(rms(d.tau - predicted_effort(identified, d.q, d.qd, d.qdd))
                          / rms(d.tau - published(d)))
        print("  other recordings  " + " ".join(f"{x:10.3f}" for x in np.max(ratios, axis=0))
              + "  (worst ratio)")
    _all_together(model, urdf, work, recordings, published, drive)
    print(f"files in {work}")
    return 0


def _all_together(model, urdf, work, recordings, published, drive):
    """Identify from the five recordings at once (samples stacked), as the doc reports."""
    out = work / "all_identified.yaml"
    subprocess.run(CLI + ["identify", str(urdf), *(str(work / n) for n in RECORDINGS),
                          "--torque-constant", str(work / "gains.yaml"), "-o", str(out),
                          "--force"], check=True, capture_output=True)
    identified = RobotModel.from_yaml(out)
    fit = identify_recordings(model, [recordings[n] for n in RECORDINGS],
                              IdentificationOptions(gear_ratios=drive.gear_ratios))
    print("all five recordings together:")
    rows = [("held-out, all", fit.held_out)]
    for name, held in zip(RECORDINGS, _held_per_recording(fit)):
        rows.append((f"held-out, {name}", held))
    factor = fit.check.factors[fit.check.chosen]
    rows.append((VALIDATION, prepare_validation(recordings[VALIDATION], factor,
                                                IdentificationOptions())))
    for label, d in rows:
        ratio = (rms(d.tau - predicted_effort(identified, d.q, d.qd, d.qdd))
                 / rms(d.tau - published(d)))
        print(f"  {label:<38} ({d.t.size:4d})" + " ".join(f"{x:7.3f}" for x in ratio))


def _held_per_recording(fit):
    """Split the stacked held-out samples back into their recordings (in order)."""
    held, parts, start = fit.held_out, [], 0
    for k in range(1, held.index.size + 1):
        if k == held.index.size or held.index[k] < held.index[k - 1]:
            parts.append(held.subset(slice(start, k)))
            start = k
    return parts


if __name__ == "__main__":
    sys.exit(main())
