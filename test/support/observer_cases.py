"""
Tracking runs of the shipped Puma in the core simulator, for the observer's tests.

A computed-torque controller (friction compensated, the model's own) tracks sinusoids on every
joint; the simulator holds each command over one step of ``dt`` and may apply an external joint
torque J(q)^T F from a wrench F on the tool (world axes, moment about the tool point), switched
on at ``wrench_on``.  The observer sees every step's state with the torque applied over it
(``effort_timing="interval"``).
"""

from typing import NamedTuple

import numpy as np

from robot_dynamics_ros.bags.storage import output_bag
from robot_dynamics_ros.bags.types import typestore
from robot_dynamics_ros.codegen import generated_model
from robot_dynamics_ros.core import RobotModel, jacobian
from robot_dynamics_ros.core.simulation import Simulator
from robot_dynamics_ros.messages.cdr import JOINT_STATE, JointStateTemplate

Q0 = np.array([0.0, 0.6, -0.9, 0.2, 0.5, 0.1])
KP, KD = 100.0, 20.0
# J^T F of the test wrenches where they start: along every joint's motion on GENTLE (a push), so
# that no joint stops; a wrench that stops a joint hides the part of its torque below F_s
PUSH = np.array([10.0, 30.0, 12.0, 1.5, 1.5, 1.0])


class Tracking(NamedTuple):
    """A sinusoidal reference q0 + A sin(w t) per joint."""

    amplitude: np.ndarray
    frequency: np.ndarray       # rad/s

    def sample(self, t: float):
        a, w = self.amplitude, self.frequency
        return Q0 + a * np.sin(w * t), a * w * np.cos(w * t), -a * w * w * np.sin(w * t)


# every joint reverses every few seconds, so joints stop, stick and break away again
FREE_MOTION = Tracking(np.array([0.4, 0.3, 0.3, 0.5, 0.4, 0.6]),
                       np.array([1.1, 0.9, 1.3, 1.7, 1.5, 2.1]))
# slow enough that no joint reverses in the first 1.3 s (the wrench tests' window)
GENTLE = Tracking(np.array([0.2, 0.15, 0.15, 0.2, 0.2, 0.2]),
                  np.array([0.5, 0.4, 0.6, 0.7, 0.6, 0.8]))


class Run(NamedTuple):
    """One row per step: the time after it, the state, the applied torque, J^T F."""

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    tau: np.ndarray
    external: np.ndarray
    t0: float
    q0: np.ndarray
    qd0: np.ndarray


def puma():
    return RobotModel.named("puma560")


def track(model, tracking: Tracking, duration: float, dt: float = 1e-3, wrench=None,
          wrench_on: float = np.inf, on_step=None) -> Run:
    """Simulate the tracking run; ``on_step(t, q, qd, tau)`` is called after every step."""
    rnea = generated_model(model).module.rnea
    q0, qd0, _ = tracking.sample(0.0)
    sim = Simulator(model, q0, qd0, dt)
    steps = int(round(duration / dt))
    rows = {k: np.empty((steps, model.n)) for k in ("q", "qd", "tau", "external")}
    times = np.empty(steps)
    zero = np.zeros(model.n)
    for k in range(steps):
        t = sim.t
        qr, qdr, qddr = tracking.sample(t)
        q, qd = sim.q, sim.qd
        command = rnea(q.tolist(), qd.tolist(), (qddr + KD * (qdr - qd) + KP * (qr - q)).tolist())
        external = jacobian(model, q).T @ wrench if t >= wrench_on - 1e-12 else zero
        applied, _ = sim.step(command, external=external)
        times[k] = sim.t
        rows["q"][k], rows["qd"][k], rows["tau"][k] = sim.q, sim.qd, applied
        rows["external"][k] = external
        if on_step is not None:
            on_step(sim.t, rows["q"][k], rows["qd"][k], rows["tau"][k])
    return Run(times, rows["q"], rows["qd"], rows["tau"], rows["external"], 0.0, q0, qd0)


def push_wrench(model, t: float) -> np.ndarray:
    """Return the wrench on the tool (world axes, moment about the tool point): J^T F = PUSH."""
    q = GENTLE.sample(t)[0]
    return np.linalg.solve(jacobian(model, q).T, PUSH)


def write_bag(path, model, run: Run, stamps):
    """Write a bag of the run's joint states (position, velocity, applied effort) at ``stamps``."""
    rows = JointStateTemplate(model.joint_names, ("position", "velocity", "effort")).encode_many(
        stamps, position=run.q, velocity=run.qd, effort=run.tau)
    with output_bag(path) as writer:
        connection = writer.add_connection("/joint_states", JOINT_STATE, typestore=typestore())
        for stamp, row in zip(stamps.tolist(), rows):
            writer.write(connection, stamp, row.data)
