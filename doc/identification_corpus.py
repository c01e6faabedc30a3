"""
Identify with the defaults from real robots' public logs; compare with the published models.

    .venv/bin/python doc/identification_corpus.py [ROBOT ...] [--work DIR]

ROBOT: ``ur10e``, ``panda``, ``staubli_tx40``, ``kinova_gen3`` (default: all).  The TX40's and
the Gen3's data are in the repository (test/data/identification); the others' licences do not
allow that, so they are read from checkouts under ``$ROBOT_DYNAMICS_CORPUS``
(``$ROBOT_DYNAMICS_CORPUS/dynamic_calibration``,
``$ROBOT_DYNAMICS_CORPUS/FrankaEmikaPandaDynModel``; the commits are in
test/data/identification/README.md).  The readers are those of the tests,
``test/support/identification_corpus.py``.  For each robot and training recording (and, where
a robot has several, for all of them together: the run of the test) this script

1. writes the training recordings and the validation recording as rosbag2 bags of
   sensor_msgs/JointState (efforts as recorded: currents, or torques);
2. runs ``robot-dynamics identify ROBOT TRAIN... --validate VALIDATION -o FILE`` with the defaults
   and only what the data need to be read (the UR10e's drive gains, the TX40's unit torque
   constant), and says whether it wrote the file; where it refused, it runs again with
   ``--force`` to get the figures;
3. compares, joint by joint, the torque RMS error of the file written and of the published
   model (friction included) on the validation recording (filtered at the cut-off the command
   chose), and on the training recordings' held-out share that of the model the same
   identification fits without it (run in Python, without ``--validate``: the command's file
   has been refitted to that share, pipeline step 5).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test" / "support"))

from identification_corpus import (CORPUS, chosen_factor, compare, source,  # noqa: E402
                                   validation_samples, write_bags)
from robot_dynamics_ros.core import RobotModel  # noqa: E402
from robot_dynamics_ros.core.identification.drives import (  # noqa: E402
    gains_from_constants, gains_from_file)
from robot_dynamics_ros.core.identification.pipeline import (  # noqa: E402
    IdentificationOptions, identify_recordings)

CLI = [sys.executable, "-m", "robot_dynamics_ros.commands.cli"]


def _identify(recordings, bags, validation, out):
    """Run the command with the defaults; return (wrote, its output, the model written)."""
    command = CLI + ["identify", recordings.robot, *map(str, bags), "--validate",
                     str(validation), "-o", str(out), *recordings.arguments]
    run = subprocess.run(command, capture_output=True, text=True)
    wrote = run.returncode == 0
    if not wrote:
        refusal = [line for line in run.stderr.splitlines() if "identify:" in line]
        print("    refused: " + (refusal[-1] if refusal else run.stderr[-400:]))
        run = subprocess.run(command + ["--force"], capture_output=True, text=True)
        if run.returncode != 0:
            print(run.stderr[-2000:])
            return wrote, run.stdout, None
    side = [line for line in run.stderr.splitlines() if "efforts taken as" in line]
    print("    " + (side[0] if side else ""))
    return wrote, run.stdout, RobotModel.from_yaml(out)


def _options(recordings) -> IdentificationOptions:
    """Return the options the command uses for these arguments (its defaults otherwise)."""
    if "--torque-constant" in recordings.arguments:
        given = recordings.arguments[1:]
        gains = gains_from_file(recordings.model, given[0]) if Path(given[0]).is_file() \
            else gains_from_constants(recordings.model, [float(x) for x in given])
        return IdentificationOptions(gear_ratios=gains.gear_ratios, torque_side="motor")
    if "--torque-source" in recordings.arguments:
        side = recordings.arguments[recordings.arguments.index("--torque-source") + 1]
        return IdentificationOptions(torque_side=side)
    return IdentificationOptions(torque_side="auto")


def _row(label, count, ours, theirs) -> str:
    """Return a table row: identified / published per joint, in bold where at most 1."""
    cells = []
    for a, b in zip(ours, theirs):
        ratio = f"{a / b:.3f}"
        cells.append(f"{a:.3g} / {b:.3g} = " + (f"**{ratio}**" if a <= b else ratio))
    return f"| {label} ({count}) | {' | '.join(cells)} |"


def run_robot(robot, work: Path) -> None:
    """Identify from each training recording of ``robot``, and all together; print the table."""
    directory, reason = source(robot)
    if directory is None:
        print(f"{robot.name}: skipped: {reason}")
        return
    recordings = robot.read(directory, work)
    names = recordings.model.joint_names
    print(f"\n{robot.name} ({robot.maker}, {robot.sensor}): identified / published torque "
          "RMS error, N m")
    print("| recording (samples) | " + " | ".join(names) + " |")
    print("| --- |" + " --- |" * len(names))
    runs = [[name] for name in recordings.training]
    if len(runs) > 1:
        runs.append(list(recordings.training))      # all of them: the test's run
    for training in runs:
        _run(recordings, training, work / ("all" if len(training) > 1 else training[0]))


def _run(recordings, names, work: Path) -> None:
    """Identify from the training recordings ``names`` together; print their two rows."""
    bags, validation = write_bags(recordings, work, names)
    wrote, report, identified = _identify(recordings, bags, validation,
                                          work / "identified.yaml")
    if identified is None:
        return
    name = names[0] if len(names) == 1 else f"all {len(names)} recordings"
    fit = identify_recordings(recordings.model, [recordings.training[n][0] for n in names],
                              _options(recordings))
    held = fit.held_out
    print(_row(f"{name}: held-out share, by the fit without it", held.t.size,
               *compare(recordings, fit.written, held)))
    data = validation_samples(recordings, chosen_factor(report))
    label = f"{name} -> {recordings.validation[0]}" + ("" if wrote else " (refused, --force)")
    print(_row(label, data.t.size, *compare(recordings, identified, data)))


def main() -> int:
    """Run the robots named on the command line (all by default) and print their tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("robots", nargs="*", default=[r.name for r in CORPUS])
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="corpus_"))
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    known = {r.name: r for r in CORPUS}
    for name in args.robots:
        if name not in known:
            parser.error(f"unknown robot {name!r}: one of {', '.join(known)}")
        np.seterr(all="ignore")
        run_robot(known[name], work / name)
    print(f"files in {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
