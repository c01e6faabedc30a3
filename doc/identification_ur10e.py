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

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test" / "support"))

from identification_corpus import (UR10E_RECORDINGS as RECORDINGS,  # noqa: E402
                                   UR10E_VALIDATION as VALIDATION, read_ur10e)
from robot_dynamics_ros.bags import write_joint_states  # noqa: E402
from robot_dynamics_ros.core import RobotModel  # noqa: E402
from robot_dynamics_ros.core.identification import predicted_effort  # noqa: E402
from robot_dynamics_ros.core.identification.drives import gains_from_file  # noqa: E402
from robot_dynamics_ros.core.identification.pipeline import (  # noqa: E402
    IdentificationOptions, identify_recordings, prepare_validation)
from robot_dynamics_ros.core.identification.validation import rms  # noqa: E402

CLI = [sys.executable, "-m", "robot_dynamics_ros.commands.cli"]


def main() -> int:
    """Identify from each recording and from all five; print the ratios to the published model."""
    clone = Path(sys.argv[1])
    work = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(tempfile.mkdtemp(prefix="ur10e_"))
    work.mkdir(parents=True, exist_ok=True)
    data = read_ur10e(clone, work)         # the readers of the tests' corpus
    model, urdf, published = data.model, Path(data.robot), data.published
    gains_path = Path(data.arguments[1])
    (work / "gains.yaml").write_text(gains_path.read_text())
    drive = gains_from_file(model, work / "gains.yaml")
    parts = dict(data.training)
    parts[data.validation[0]] = data.validation[1:]
    recordings = {}
    for name in RECORDINGS + [VALIDATION]:
        rec, currents = parts[name]
        recordings[name] = rec
        write_joint_states(work / name, model.joint_names, rec.t, rec.q, rec.qd, currents)
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
