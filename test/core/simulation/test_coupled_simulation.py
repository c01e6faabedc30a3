"""The simulator with coupled drives, against Pinocchio plus the hand-derived rotor matrix."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from coupled_wrist import FV, hand_friction, hand_rotor_matrix, wrist
from robot_dynamics_ros.core import RobotModel, simulate
from robot_dynamics_ros.core.errors import InputError
from robot_dynamics_ros.core.model.urdf_export import urdf_text
from robot_dynamics_ros.core.simulation.energy import mechanical_energy
from urdf_samples import PinocchioChain

Q0, QD0 = np.array([0.3, -0.7]), np.array([1.5, -2.5])


TAU = np.array([2.0, -1.0])     # held: the reference sees the simulator's torque exactly


def reference(duration):
    """Pinocchio's rigid dynamics + K^T D K + K^T F_v K qd, by an adaptive integrator."""
    rigid = RobotModel.from_dict(wrist(coulomb=False)).rigid()
    oracle = PinocchioChain(urdf_text(rigid), list(rigid.joint_names), "tool0")
    rotor = hand_rotor_matrix()

    def rhs(t, y):
        q, qd = y[:2], y[2:]
        bias = oracle.rnea(q, qd, np.zeros(2)) + hand_friction(qd, coulomb=False)
        qdd = np.linalg.solve(oracle.mass_matrix(q) + rotor, TAU - bias)
        return np.concatenate([qd, qdd])
    return solve_ivp(rhs, (0.0, duration), np.concatenate([Q0, QD0]), method="DOP853",
                     rtol=1e-11, atol=1e-11, dense_output=True)


@pytest.mark.parametrize("compiled", [True, False])
def test_simulation_agrees_with_pinocchio_and_the_hand_rotor_matrix(compiled):
    model = RobotModel.from_dict(wrist(coulomb=False))
    # RK4 at dt = 1 ms: global error O(dt^4) of these accelerations, far below 1e-7
    result = simulate(model, Q0, QD0, 0.3, dt=1e-3, torque=TAU, effort_limits=False,
                      joint_limits=False, compiled=compiled)
    ref = reference(0.3).sol(result.t)
    assert np.abs(result.q - ref[:2].T).max() < 1e-7
    assert np.abs(result.qd - ref[2:].T).max() < 1e-6
    # without the coupling the run differs by far more than that (the test can tell)
    plain = simulate(RobotModel.from_dict(wrist(coupled=False, coulomb=False)), Q0, QD0, 0.3,
                     dt=1e-3, torque=TAU, effort_limits=False, joint_limits=False)
    assert np.abs(plain.qd[-1] - ref[2:, -1]).max() > 1e3 * 1e-6


def test_energy_balance_with_coupled_friction():
    # unforced: E(0) - E(t) = the drives' dissipated energy, int v^T F_v v dt with v = K qd
    model = RobotModel.from_dict(wrist(coulomb=False))
    result = simulate(model, Q0, QD0, 0.5, dt=2e-4, effort_limits=False, joint_limits=False)
    energy = mechanical_energy(model, result.q, result.qd)
    v = result.qd @ model.coupling.T
    power = (v * v) @ FV
    dissipated = np.concatenate([[0.0], np.cumsum(0.5 * (power[1:] + power[:-1])
                                                  * np.diff(result.t))])
    scale = energy[0] - energy[-1]
    assert scale > 0.1                      # the friction does take energy out
    assert np.abs(energy[0] - energy - dissipated).max() < 1e-4 * scale


def test_coulomb_friction_on_a_coupled_drive_is_refused():
    with pytest.raises(InputError, match=r"joint\(s\) \['joint6'\] move with other joints"):
        simulate(RobotModel.from_dict(wrist()), Q0, QD0, 0.01, effort_limits=False)


def test_coulomb_friction_on_the_uncoupled_drive_still_sticks():
    # drive 5 moves joint 5 alone (row (1, 0)): its stick-slip step is the per-joint one, with
    # B + the coupling's rotor matrix; the Python and the compiled route take the same steps
    spec = wrist()
    spec["joints"][1]["friction"]["coulomb"] = 0.0
    model = RobotModel.from_dict(spec)
    runs = [simulate(model, Q0, [0.5, -0.5], 1.0, effort_limits=False, joint_limits=False,
                     compiled=compiled) for compiled in (True, False)]
    assert np.abs(runs[0].q - runs[1].q).max() < 1e-12
    stuck = runs[0].qd[:, 0] == 0.0
    assert stuck[-100:].all() and runs[0].q[-1, 0] == runs[0].q[-100, 0]
    assert np.abs(runs[0].qd[-1, 1]) > 0.1                 # while joint 6 still moves


@pytest.mark.parametrize("compiled", [True, False])
def test_energy_balance_with_quadratic_and_joint_side_friction(compiled):
    # unforced: E(0) - E(t) = int qd^T f(qd) dt, f the hand-derived friction with drive 6's F_v2
    # on v6 = qd5 + qd6 and joint 6's joint-side F_vj qd6 (test/support/coupled_wrist.py)
    from coupled_wrist import hand_friction_joint_side, wrist_with_joint_side
    model = RobotModel.from_dict(wrist_with_joint_side(coulomb=False))
    result = simulate(model, Q0, QD0, 0.5, dt=2e-4, effort_limits=False, joint_limits=False,
                      compiled=compiled)
    energy = mechanical_energy(model, result.q, result.qd)
    power = np.einsum("ki,ki->k", result.qd, hand_friction_joint_side(result.qd, coulomb=False))
    dissipated = np.concatenate([[0.0], np.cumsum(0.5 * (power[1:] + power[:-1])
                                                  * np.diff(result.t))])
    scale = energy[0] - energy[-1]
    assert scale > 0.1
    assert np.abs(energy[0] - energy - dissipated).max() < 1e-4 * scale
    # the same run without the further terms loses less energy: the test sees them
    plain = simulate(RobotModel.from_dict(wrist(coulomb=False)), Q0, QD0, 0.5, dt=2e-4,
                     effort_limits=False, joint_limits=False, compiled=compiled)
    lost = energy[0] - mechanical_energy(model, plain.q, plain.qd)[-1]
    assert abs(lost - scale) > 1e-2 * scale
