"""
Cost per message of the external-torque observer, against the torque nodes' and Pinocchio's.

    flock /work/bench.lock .venv/bin/python bench/bench_observer.py [--quick] [--no-nodes]
        [--accuracy]

Core (one configuration per call, lists of floats as the nodes pass them; Puma 560 and Panda):

* observer step: ``MomentumObserver.update`` -- p = B qd and C^T qd by the O(n) recursion
  (``core/algorithms/momentum.py``), g(q) by the node's Dynamics (the core's compiled kernel,
  ``core.algorithms.route.select``), passed in as the node does, the friction band and the
  exact discrete filter;
* + contact and wrench: ``ContactDetector.update`` and ``wrench_values`` (the tool Jacobian on
  floats, SVD), the node's whole computation per message;
* the torque nodes' computations per message: g(q) (gravity_compensation,
  ``Dynamics.holding_values``) and the RNEA (inverse_dynamics, ``Dynamics.rnea_values``);
* the reference: the same terms by Pinocchio 4 (``crba`` q-d product, ``computeCoriolisMatrix``
  transposed times qd, ``computeGeneralizedGravity``; rigid model, agreement checked), and C^T qd
  alone by our recursion, by ``coriolis_matrix`` transposed, and by Pinocchio.

Nodes (in-process, no DDS; unless ``--no-nodes``): the CPU time (``time.thread_time_ns``) of each
node's joint_states callback on the same serialized JointState: gravity_compensation,
inverse_dynamics (computed torque, a reference active) and external_torque_observer, publishing
included.  Ratios are to the gravity node and to inverse_dynamics measured in the same run.

Accuracy (``--accuracy``, not a timing): the largest |r| without contact on the shipped Puma
tracking sinusoids (computed torque, its friction compensated at the measured velocity) in the
core simulator for 2.2 s, at steps h = 2, 1, 0.5 ms (the observer at every step, effort timing
"interval"), with the robot's Coulomb friction (joints stick at reversals) and without it: the
O(h) of the simulator's friction step and the O(h^2) of the observer's quadrature.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reference_models import pinocchio_model  # noqa: E402
from robot_dynamics_ros.core import RobotModel, coriolis_matrix, momentum_terms  # noqa: E402
from robot_dynamics_ros.core.observer import (ContactDetector, MomentumObserver,  # noqa: E402
                                              ObserverOptions)
from robot_dynamics_ros.core.observer.wrench import wrench_values  # noqa: E402
from robot_dynamics_ros.nodes.dynamics import select_dynamics  # noqa: E402


def best_us(fn, number: int, repeat: int = 7) -> float:
    """
    CPU microseconds per call: the minimum over repeats of ``number`` calls.

    CPU time of this thread (``time.thread_time``), not wall time: on the shared machine the
    process is often descheduled, which wall-clock figures would count.
    """
    best = float("inf")
    for _ in range(repeat):
        started = time.thread_time()
        for _ in range(number):
            fn()
        best = min(best, time.thread_time() - started)
    return best / number * 1e6


def core_rows(name: str, reps: int) -> dict:
    model = RobotModel.named(name)
    dynamics = select_dynamics(model)
    rng = np.random.default_rng(0)
    q, qd, qdd, tau = (rng.uniform(-1, 1, model.n).tolist() for _ in range(4))
    observer = MomentumObserver(model, ObserverOptions(50.0),
                                gravity=dynamics._gravity_raw)
    detector = ContactDetector(0.05 * model.effort_limit)
    clock = [0.0]

    def observer_step():
        clock[0] += 1e-3
        return observer.update(clock[0], q, qd, tau)

    def whole():
        r = observer_step()
        detector.update(r)
        return wrench_values(model, q, r)
    rows = {"observer step": best_us(observer_step, reps),
            "observer + contact + wrench": best_us(whole, reps),
            "gravity node's g(q)": best_us(lambda: dynamics.holding_values(q), reps),
            "inverse dynamics' RNEA": best_us(lambda: dynamics.rnea_values(q, qd, qdd), reps),
            "C^T qd: ours O(n)": best_us(lambda: momentum_terms(model, q, qd), reps),
            "C^T qd: coriolis_matrix^T qd": best_us(
                lambda: coriolis_matrix(model, q, qd).T @ qd, max(reps // 20, 10))}
    pm = pinocchio_model(model)
    if pm is not None:
        import pinocchio as pin
        data = pm.createData()
        rigid = model.rigid()
        qa, qda = np.array(q), np.array(qd)
        M = pin.crba(pm, data, qa)
        M = np.triu(M) + np.triu(M, 1).T
        C = pin.computeCoriolisMatrix(pm, data, qa, qda)
        p, ctq = momentum_terms(rigid, qa, qda)
        np.testing.assert_allclose(M @ qda, p, atol=1e-10)
        np.testing.assert_allclose(C.T @ qda, ctq, atol=1e-10)

        def pinocchio_terms():
            M = pin.crba(pm, data, qa)
            pin.computeCoriolisMatrix(pm, data, qa, qda)
            pin.computeGeneralizedGravity(pm, data, qa)
            return (np.triu(M) + np.triu(M, 1).T) @ qda, data.C.T @ qda, data.g
        rows["terms: Pinocchio (crba, Coriolis, gravity)"] = best_us(pinocchio_terms, reps)
        rows["C^T qd: Pinocchio"] = best_us(
            lambda: pin.computeCoriolisMatrix(pm, data, qa, qda).T @ qda, reps)
    return rows


def accuracy():
    """Print the largest residual without contact at three step sizes (see the docstring)."""
    from robot_dynamics_ros.codegen import generated_model
    from robot_dynamics_ros.core.simulation import Simulator
    from robot_dynamics_ros.core.simulation.dynamics import without_coulomb
    q0 = np.array([0.0, 0.6, -0.9, 0.2, 0.5, 0.1])
    a = np.array([0.4, 0.3, 0.3, 0.5, 0.4, 0.6])
    w = np.array([1.1, 0.9, 1.3, 1.7, 1.5, 2.1])
    print("\nlargest |r| without contact [N m], Puma tracking 2.2 s (after 0.1 s)")
    puma = RobotModel.named("puma560")
    for label, model in (("with Coulomb friction", puma),
                         ("without Coulomb friction", without_coulomb(puma))):
        rnea = generated_model(model).module.rnea
        cells = []
        for h in (2e-3, 1e-3, 5e-4):
            sim = Simulator(model, q0, a * w, h)
            observer = MomentumObserver(model, ObserverOptions(50.0, effort_timing="interval"))
            observer.update(0.0, sim.q.tolist(), sim.qd.tolist(), [0.0] * 6)
            worst = 0.0
            for _ in range(int(round(2.2 / h))):
                t = sim.t
                q, qd = sim.q, sim.qd
                qr, qdr, qddr = q0 + a * np.sin(w * t), a * w * np.cos(w * t), \
                    -a * w * w * np.sin(w * t)
                command = rnea(q.tolist(), qd.tolist(),
                               (qddr + 20.0 * (qdr - qd) + 100.0 * (qr - q)).tolist())
                applied, _ = sim.step(command)
                r = observer.update(sim.t, sim.q.tolist(), sim.qd.tolist(), applied)
                if sim.t > 0.1:
                    worst = max(worst, max(map(abs, r)))
            cells.append(f"h = {h * 1e3:g} ms: {worst:.3g}")
        print(f"  {label:<26}" + ";  ".join(cells))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--no-nodes", action="store_true", help="core figures only")
    parser.add_argument("--accuracy", action="store_true",
                        help="also the residual's accuracy on simulated motion")
    args = parser.parse_args(argv)
    reps = 300 if args.quick else 3000
    print(f"load {os.getloadavg()[0]:.2f} at the start; {os.cpu_count()} CPUs")
    for name in ("puma560", "panda"):
        rows = core_rows(name, reps)
        gravity, rnea = rows["gravity node's g(q)"], rows["inverse dynamics' RNEA"]
        print(f"\n{name}: CPU us per message (best of 7), and ratios to the torque nodes' own "
              "computations timed in the same run")
        for key, us in rows.items():
            print(f"  {key:<44}{us:>9.2f} us   {us / gravity:>6.1f}x g(q)   "
                  f"{us / rnea:>6.2f}x RNEA")
        if "terms: Pinocchio (crba, Coriolis, gravity)" in rows:
            ours = rows["observer step"]
            print(f"  observer step / Pinocchio's terms: "
                  f"{ours / rows['terms: Pinocchio (crba, Coriolis, gravity)']:.2f}; C^T qd ours"
                  f" / Pinocchio: {rows['C^T qd: ours O(n)'] / rows['C^T qd: Pinocchio']:.2f}")
    if args.accuracy:
        accuracy()
    if not args.no_nodes:
        from node_callbacks import node_rows
        rows = node_rows(reps // 3)
        print("\nnode callbacks in-process (CPU us per joint_states message, publishing "
              "included; median of the per-call times)")
        for key, us in rows.items():
            print(f"  {key:<44}{us:>9.1f} us   {us / rows['gravity_compensation']:>6.2f}x gravity"
                  f"   {us / rows['inverse_dynamics']:>6.2f}x inverse_dynamics")
    return 0


if __name__ == "__main__":
    sys.exit(main())
