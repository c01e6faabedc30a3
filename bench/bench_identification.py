"""
Speed of identification on the Puma 560: the regressor, the fits, and the command's pipeline.

    .venv/bin/python bench/bench_identification.py [--quick]

Data: N states of a random multi-sine (default 100,000 at 1 kHz), efforts of a 'real' Puma
(other inertias, friction 1-2 % of the effort limits, torque offsets; ``real_robot``) plus 1 %
noise, encoder noise 1e-5 rad.  Timed, best of ``--repeat`` runs, as ratios to references run in
the same process:

  * the reference: ``rnea`` of the N samples as one batch; and Pinocchio's
    ``computeJointTorqueRegressor`` (4.x, C++) called once per sample from Python on the same
    robot's rigid URDF (timed on 10,000 samples and scaled), against our rigid ``regressor`` of
    all N samples in one batched call (the regressor has its own Newton-Euler recursion, kept for
    this batched speed);
  * ``regressor`` with what the command fits (rotors, viscous, Coulomb, offsets);
  * ``identify`` with those columns: ordinary, weights="auto", consistent (cvxpy + Clarabel);
  * ``identify_recordings``: what ``robot-dynamics identify`` runs after reading the bag: the
    filter at every candidate cut-off and reversal window, the checks on the held-out share, the
    consistent fit (from raw stamps, positions and efforts).

Target (issue 12): regressor of 100,000 Puma samples and identification under 10 s.
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "test" / "support"))

from identification_data import multisine, real_robot  # noqa: E402
from robot_dynamics_ros.core import RobotModel, rnea  # noqa: E402
from robot_dynamics_ros.core.identification import (  # noqa: E402
    FRICTION_KINDS, InconsistentParametersWarning, base_parameters, identify, predicted_effort,
    regressor)
from robot_dynamics_ros.core.identification.pipeline import (  # noqa: E402
    Recording, identify_recordings, with_rotors)
from robot_dynamics_ros.core.model.urdf_export import urdf_text  # noqa: E402


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def pinocchio_regressor_time(model, q, qd, qdd, samples: int):
    """Return Pinocchio's time for ``samples`` single-sample regressors, or None without it."""
    try:
        import pinocchio as pin
    except ImportError:
        return None
    pmodel = pin.buildModelFromXML(urdf_text(model.rigid()))
    data = pmodel.createData()

    def run():
        for k in range(samples):
            pin.computeJointTorqueRegressor(pmodel, data, q[k], qd[k], qdd[k])
    return best(run, 1)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="10,000 samples, one run")
    args = parser.parse_args()
    if args.quick:
        args.samples, args.repeat = 10_000, 1
    file_model = RobotModel.named("puma560")
    model = with_rotors(file_model)
    real = real_robot(file_model, payload=False)
    N = args.samples
    t = np.arange(N) / 1000.0
    rng = np.random.default_rng(1)
    q, qd, qdd = multisine(model, t, np.random.default_rng(0), period=8.0)
    tau = predicted_effort(real, q, qd, qdd) + rng.normal(size=q.shape) * 0.01 * \
        model.effort_limit
    measured_q = q + rng.normal(size=q.shape) * 1e-5
    rigid = model.rigid()
    for m, kinds in ((model, FRICTION_KINDS), (rigid, ())):
        base_parameters(m, kinds)       # per-model constants, computed once (not timed)

    t_rnea = best(lambda: rnea(model, q, qd, qdd), args.repeat)
    t_rigid = best(lambda: regressor(rigid, q, qd, qdd), args.repeat)
    loop = min(N, 10_000)
    t_pin = pinocchio_regressor_time(model, q, qd, qdd, loop)
    t_reg = best(lambda: regressor(model, q, qd, qdd, FRICTION_KINDS), args.repeat)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InconsistentParametersWarning)
        t_ols = best(lambda: identify(model, q, qd, qdd, tau, friction=FRICTION_KINDS),
                     args.repeat)
        t_wls = best(lambda: identify(model, q, qd, qdd, tau, weights="auto",
                                      friction=FRICTION_KINDS), args.repeat)
        t_cons = best(lambda: identify(model, q, qd, qdd, tau, weights="auto", consistent=True,
                                       friction=FRICTION_KINDS), 1)
        fit = []
        t_pipe = best(lambda: fit.append(identify_recordings(
            file_model, [Recording("bench", t, measured_q, None, tau)])), 1)
    p = len(regressor(model, q[0], qd[0], qdd[0], FRICTION_KINDS)[0])
    b = base_parameters(model, FRICTION_KINDS).count
    check = fit[0].check
    print(f"Puma 560 with rotors, friction (F_v, F_c, F_v2, F_l), offsets: {N:,} samples, "
          f"{p} parameters, {b} base parameters")
    print(f"  rnea, one batch (reference)          {t_rnea:8.3f} s")
    print(f"  regressor, rigid, one batch          {t_rigid:8.3f} s   "
          f"({t_rigid / t_rnea:.1f} x batched rnea)")
    if t_pin is not None:
        scaled = t_pin * N / loop
        print(f"  Pinocchio computeJointTorqueRegressor, {N:,} single calls (from {loop:,}) "
              f"{scaled:8.3f} s   (ours batched: {scaled / t_rigid:.2f} x faster)")
    print(f"  regressor, with rotors and friction  {t_reg:8.3f} s   "
          f"({t_reg / t_rnea:.1f} x batched rnea)")
    print(f"  identify, ordinary                   {t_ols:8.3f} s   "
          f"({t_ols / t_rnea:.1f} x batched rnea)")
    print(f"  identify, weights='auto'             {t_wls:8.3f} s   "
          f"({t_wls / t_rnea:.1f} x)")
    print(f"  identify, weights='auto', consistent {t_cons:8.3f} s   "
          f"({t_cons / t_rnea:.1f} x)")
    print(f"  identify_recordings (the command's defaults, {len(check.factors)} cut-offs and "
          f"{len(check.windows.windows)} windows tried) {t_pipe:8.3f} s   "
          f"({t_pipe / t_rnea:.1f} x)")
    print(f"  regressor + consistent identify      {t_reg + t_cons:8.3f} s   (target: under 10 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
