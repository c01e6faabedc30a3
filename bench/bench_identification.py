"""
Speed of identification on the Puma 560: regressor of 100,000 samples and the least-squares fit.

    .venv/bin/python bench/bench_identification.py [--quick]

Data: 100,000 states of a random multi-sine (full model: rotors and friction, 52 base parameters),
torques of a perturbed robot plus 1 % noise.  Prints, best of ``--repeat`` runs:

  * ``regressor`` of all samples, (100000, 6, 78), in one batched call;
  * ``identify`` (ordinary least squares: regressor in chunks, per-joint QR factors, fit,
    standard deviations, the full parameter set) and with weights="auto";
  * the baselines timed in the same run: the same number of ``rnea`` calls as one batch, and as
    single calls in a Python loop (timed on 10,000 and scaled);
  * ``identify(consistent=True)`` (the LMI-constrained fit with cvxpy + Clarabel) for reference.

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
sys.path.insert(0, str(ROOT / "test"))

from identification_data import multisine, perturbed  # noqa: E402
from robot_dynamics_ros.core import RobotModel, rnea  # noqa: E402
from robot_dynamics_ros.core.identification import (  # noqa: E402
    InconsistentParametersWarning, base_parameters, identify, regressor)


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="10,000 samples, one run")
    args = parser.parse_args()
    if args.quick:
        args.samples, args.repeat = 10_000, 1
    model = RobotModel.named("puma560")
    true = perturbed(model, [1.0, 1.1, 0.9, 1.2, 0.8, 1.3])
    N = args.samples
    t = np.linspace(0.0, N / 1000.0, N)
    q, qd, qdd = multisine(model, t, np.random.default_rng(0))
    tau = rnea(true, q, qd, qdd) + np.random.default_rng(1).normal(size=q.shape) * \
        0.01 * model.effort_limit
    base_parameters(model)      # per-model constant, computed once (not part of the timing)

    t_rnea = best(lambda: rnea(model, q, qd, qdd), args.repeat)
    loop = min(N, 10_000)
    t_loop = best(lambda: [rnea(model, q[k], qd[k], qdd[k]) for k in range(loop)], 1) * N / loop
    t_reg = best(lambda: regressor(model, q, qd, qdd), args.repeat)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InconsistentParametersWarning)
        t_ols = best(lambda: identify(model, q, qd, qdd, tau), args.repeat)
        t_wls = best(lambda: identify(model, q, qd, qdd, tau, weights="auto"), args.repeat)
        t_cons = best(lambda: identify(model, q, qd, qdd, tau, consistent=True), 1)
    p, b = regressor(model, q[0], qd[0], qdd[0]).shape[1], base_parameters(model).count
    print(f"Puma 560 (rotors, friction): {N:,} samples, {p} parameters, {b} base parameters")
    print(f"  rnea, one batch               {t_rnea:8.3f} s   (baseline)")
    print(f"  rnea, {N:,} single calls  {t_loop:8.3f} s   ({t_loop / t_rnea:.0f} x batch)")
    print(f"  regressor, one batch          {t_reg:8.3f} s   "
          f"({t_reg / t_rnea:.0f} x batched rnea, "
          f"{t_reg / t_loop:.2f} x the rnea loop)")
    print(
        f"  identify (OLS)                {t_ols:8.3f} s   ({t_ols / t_rnea:.0f} x batched rnea)")
    print(f"  identify (weights='auto')     {t_wls:8.3f} s")
    print(f"  regressor + identify (OLS)    {t_reg + t_ols:8.3f} s   (target: under 10 s)")
    print(f"  identify (consistent=True)    {t_cons:8.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
