"""What the conversion commands (``convert``, ``urdf``) share: the check and the output file."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from ..core import rnea, tool_pose
from ..core.errors import RobotDescriptionError
from ..core.files import write_atomically

TOLERANCE = 1e-12        # the converted robot must agree to this, relative to max(1, |value|)


def add_output_arguments(parser, what: str) -> None:
    """Add ``-o/--output`` and ``--force``."""
    parser.add_argument("-o", "--output", help=f"{what} file to write (default: standard output)")
    parser.add_argument("--force", action="store_true", help="overwrite an existing output file")


def disagreement(model, converted, samples: int = 20) -> float:
    """
    Return the largest relative difference of the two models' dynamics and tool pose.

    Inverse dynamics (rotors and friction included) and the tool pose at ``samples`` random
    states, relative to max(1, |value|).
    """
    rng = np.random.default_rng(0)
    limit = np.where(np.isfinite(model.upper), model.upper, np.pi)
    low = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    q = rng.uniform(low, limit, (samples, model.n))
    qd, qdd = rng.uniform(-1, 1, (2, samples, model.n))
    worst = 0.0
    for a, b in ((rnea(model, q, qd, qdd), rnea(converted, q, qd, qdd)),
                 (tool_pose(model, q), tool_pose(converted, q))):
        worst = max(worst, float(np.abs(a - b).max() / max(1.0, np.abs(a).max())))
    return worst


def check_conversion(model, converted, what: str) -> None:
    """Raise RobotDescriptionError unless ``converted`` has the dynamics of ``model``."""
    if converted.joint_names != model.joint_names:
        raise RobotDescriptionError(f"the {what} has joints {list(converted.joint_names)}, "
                                    f"not {list(model.joint_names)}")
    error = disagreement(model, converted)
    if not error <= TOLERANCE:
        raise RobotDescriptionError(f"the {what} does not reproduce the robot's dynamics "
                                    f"(relative difference {error:.3g}); nothing was written")


def write_output(args, text: str, inputs: tuple[str, ...]) -> int:
    """Write ``text`` to ``args.output`` (atomically) or standard output; returns the exit code."""
    if not args.output:
        sys.stdout.write(text)
        return 0
    path = Path(args.output)
    if any(Path(p).exists() and path.exists() and path.samefile(p) for p in inputs):
        print(f"cannot write output: {path} is the input", file=sys.stderr)
        return 1
    if path.is_dir():
        print(f"cannot write output: {path} is a directory", file=sys.stderr)
        return 1
    if path.exists() and not args.force:
        print(f"cannot write output: {path} exists (use --force to overwrite it)", file=sys.stderr)
        return 1
    try:
        write_atomically(path, text)
    except OSError as exc:
        print(f"cannot write output {path}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    return 0
