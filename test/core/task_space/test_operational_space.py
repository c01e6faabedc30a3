"""
The operational space model and the dynamic manipulability ellipsoid.

Siciliano et al. 2009, eqs. 7.127-7.141 and 7.142-7.149.

Oracles: the book's own identities (Siciliano et al. 2009, Sect. 7.8) (J J_bar = I, P idempotent,
J_bar^T P = 0, the non-redundant forms 7.134-7.136, the ellipsoid equation 7.148), forward dynamics
(an independent Cholesky solve of the RNEA model): a task force must produce exactly the task
acceleration the model predicts, null-space torques none; Pinocchio's mass matrix and frame
Jacobian for Lambda.
"""

import importlib.util

import numpy as np
import pytest

from locations import REPO
from random_robots import random_robot_dict, random_state
from robot_dynamics_ros.core import (RobotModel, SingularityError, forward_dynamics,
                                     gravity_torques, jacobian, jacobian_dot_qd, mass_matrix,
                                     nonlinear_effects)
from robot_dynamics_ros.core.task_space import (null_space_projector, operational_space_model,
                                                task_force, task_space_torque)
from task_cases import close

BENCH = REPO / "bench"
CASES = [("panda", "pose", None), ("panda", "position", None), ("puma560", "pose", None),
         ("asada_5r1p", "pose", "rpy"), ("stanford", "pose", "zyz"), ("planar2", (0, 1), None)]


def _model(name):
    if name == "random8":      # redundant, with motors: B includes the rotors
        rng = np.random.default_rng(21)
        return RobotModel.from_dict(random_robot_dict(8, rng, convention="modified",
                                                      with_motors=True, name="random8"))
    # The book's model neglects friction (Sect. 7.8): the oracles run forward dynamics without it.
    return RobotModel.named(name).without_friction()


@pytest.mark.parametrize("name,task,representation", CASES + [("random8", "pose", None)])
def test_task_force_gives_the_predicted_acceleration_and_null_torques_none(name, task,
                                                                           representation):
    model = _model(name)
    rng = np.random.default_rng(1)
    for _ in range(3):
        q, qd, _ = random_state(model, rng)
        osm = operational_space_model(model, q, qd, task=task, representation=representation)
        m = osm.J.shape[0]
        np.testing.assert_allclose(osm.J @ osm.J_bar, np.eye(m), atol=1e-9)      # J J_bar = I
        xdd = rng.normal(size=m)
        F = task_force(osm, xdd)                                                  # (7.133)
        for null in (None, rng.normal(size=model.n) * 10.0):
            tau = task_space_torque(osm, F, null)                                 # (7.141)
            qdd = forward_dynamics(model, q, qd, tau)
            close(osm.J @ qdd + osm.Jdot_qd, xdd)
            close(osm.J_bar.T @ tau, F)                                          # (7.140)


@pytest.mark.parametrize("name,task,representation", CASES)
def test_lambda_is_spd_and_the_projector_idempotent(name, task, representation):
    model = _model(name)
    q, qd, _ = random_state(model, np.random.default_rng(2))
    osm = operational_space_model(model, q, qd, task=task, representation=representation)
    np.testing.assert_array_equal(osm.Lambda, osm.Lambda.T)
    assert np.linalg.eigvalsh(osm.Lambda)[0] > 0
    B = mass_matrix(model, q)
    close(np.linalg.inv(osm.J @ np.linalg.inv(B) @ osm.J.T), osm.Lambda, 1e-9)
    P = null_space_projector(osm)
    np.testing.assert_allclose(P @ P, P, atol=1e-9)
    np.testing.assert_allclose(osm.J_bar.T @ P, 0.0, atol=1e-9)
    # (7.131), (7.132) written out: mu = Lambda J B^-1 C qd - Lambda Jdot qd, p = Lambda J B^-1 g
    g = gravity_torques(model, q)
    c = nonlinear_effects(model, q, qd) - g
    LJB = osm.Lambda @ osm.J @ np.linalg.inv(B)
    close(osm.p, LJB @ g, 1e-9)
    close(osm.mu, LJB @ c - osm.Lambda @ osm.Jdot_qd, 1e-9)


@pytest.mark.parametrize("name", ["puma560", "asada_5r1p", "stanford"])
def test_non_redundant_forms(name):
    """Check (7.134)-(7.136): B_A = J^-T B J^-1, C_A xd = J^-T C qd - B_A Jdot qd, g_A = J^-T g."""
    model = _model(name)
    q, qd, _ = random_state(model, np.random.default_rng(3))
    osm = operational_space_model(model, q, qd)
    J = jacobian(model, q)
    Jinv_t = np.linalg.inv(J).T
    B, g = mass_matrix(model, q), gravity_torques(model, q)
    c = nonlinear_effects(model, q, qd) - g
    close(osm.Lambda, Jinv_t @ B @ Jinv_t.T, 1e-9)
    close(osm.mu, Jinv_t @ c - osm.Lambda @ jacobian_dot_qd(model, q, qd))
    close(osm.p, Jinv_t @ g, 1e-9)
    # the kinetic energy is the same in both coordinates: xd^T Lambda xd = qd^T B qd
    xd = J @ qd
    assert xd @ osm.Lambda @ xd == pytest.approx(qd @ B @ qd, rel=1e-10)


def test_lambda_agrees_with_pinocchio_on_the_redundant_panda():
    pin = pytest.importorskip("pinocchio")
    spec = importlib.util.spec_from_file_location("reference_models",
                                                  BENCH / "reference_models.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = RobotModel.named("panda").rigid()
    pm = module.pinocchio_model(model)
    flange = pin.SE3(model.chain.flange[:3, :3].copy(), model.chain.flange[:3, 3].copy())
    fid = pm.addFrame(pin.Frame("tool", model.n, flange, pin.FrameType.OP_FRAME))
    data = pm.createData()
    rng = np.random.default_rng(4)
    worst = 0.0
    for _ in range(5):
        q, _, _ = random_state(model, rng)
        M = pin.crba(pm, data, q)
        M = np.triu(M) + np.triu(M, 1).T
        pin.computeJointJacobians(pm, data, q)
        pin.updateFramePlacements(pm, data)
        J = pin.getFrameJacobian(pm, data, fid, pin.LOCAL_WORLD_ALIGNED)
        Lambda = np.linalg.inv(J @ np.linalg.solve(M, J.T))
        osm = operational_space_model(model, q)
        worst = max(worst, np.abs(osm.Lambda - Lambda).max() / np.abs(Lambda).max())
    assert worst < 1e-9


def test_batches_equal_single_calls():
    model = _model("panda")
    Q, QD, _ = random_state(model, np.random.default_rng(5), batch=4)
    batch = operational_space_model(model, Q, QD)
    for k in range(4):
        single = operational_space_model(model, Q[k], QD[k])
        for field in ("Lambda", "mu", "p", "J", "J_bar", "Jdot_qd"):
            np.testing.assert_allclose(getattr(batch, field)[k], getattr(single, field),
                                       rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(null_space_projector(batch)[k], null_space_projector(single),
                                   atol=1e-12)


def test_singular_task_raises_or_is_damped_never_nan():
    model = _model("planar2")
    with pytest.raises(SingularityError,
                       match=r"planar2: J B\^-1 J\^T is singular.*vx, vy, vz, wx, wy, wz"):
        operational_space_model(model, [0.3, 0.5])                # 2 joints, 6 task rows
    with pytest.raises(SingularityError, match="loses rank"):
        operational_space_model(model, [0.3, 0.0], task=(0, 1))  # stretched: kinematic singularity
    osm = operational_space_model(model, [0.3, 0.0], task=(0, 1), damping=1e-3)
    assert np.isfinite(osm.Lambda).all() and np.isfinite(osm.J_bar).all()
    with pytest.raises(SingularityError, match="configuration 1 of the batch"):
        operational_space_model(model, [[0.3, 0.5], [0.3, 0.0]], task=(0, 1))
