"""The identification regressor: Y(q, qd, qdd) pi is RNEA, linear in pi, and spans Pinocchio's."""

import numpy as np
import pytest

from identification_cases import ALL, column_rank, random_models
from random_robots import random_robot_dict, random_state
from robot_dynamics_ros.core import RobotModel, rnea
from robot_dynamics_ros.core.identification import (base_parameters, model_with_parameters,
                                                    parameter_names, parameter_vector, regressor)
from robot_dynamics_ros.core.identification.base_parameters import sample_states
from robot_dynamics_ros.core.identification.parameters import parameter_layout


# -- regressor ---------------------------------------------------------------------------------
@pytest.mark.parametrize("model", ALL,
                         ids=lambda m: f"{m.name}-{m.n}-{m.has_motors}-{m.has_friction}")
def test_regressor_times_parameters_is_rnea(model):
    rng = np.random.default_rng(1)
    q, qd, qdd = random_state(model, rng, batch=40)
    Y = regressor(model, q, qd, qdd)
    assert Y.shape == (40, model.n, len(parameter_names(model)))
    tau = rnea(model, q, qd, qdd)
    assert np.abs(Y @ parameter_vector(model) - tau).max() <= 1e-10 * max(1.0, np.abs(tau).max())
    # one configuration gives the (n, p) matrix of the batch's first row
    assert np.allclose(regressor(model, q[0], qd[0], qdd[0]), Y[0], rtol=0, atol=1e-12)
    # block upper-triangular (Siciliano et al. 2009, eq. 7.80): tau_i does not depend on the links
    # before i
    layout = parameter_layout(model)
    for i in range(1, model.n):
        assert np.all(Y[:, i, :layout.block_start[i]] == 0.0)


@pytest.mark.parametrize("model", random_models()[:3], ids=lambda m: m.name)
def test_regressor_is_linear_in_other_parameter_sets(model):
    """
    Check Y pi' against rnea of the model built from other parameters.

    Y pi' = rnea of the model built from pi' (other masses, CoMs, inertias, rotors, friction).
    """
    rng = np.random.default_rng(2)
    other = RobotModel.from_dict(
        random_robot_dict(
            model.n,
            rng,
            with_motors=True,
            with_friction=True))
    spec = model.to_dict()
    for joint, source in zip(spec["joints"], other.to_dict()["joints"]):
        joint["link"] = source["link"]
        if "motor" in joint and joint["motor"]["gear_ratio"] != 1.0:
            joint["motor"]["rotor_inertia"] = source["motor"]["rotor_inertia"]
        if model.has_friction:
            joint["friction"] = source["friction"]
    changed = RobotModel.from_dict(spec)
    q, qd, qdd = random_state(model, rng, batch=30)
    tau = rnea(changed, q, qd, qdd)
    assert np.abs(regressor(model, q, qd, qdd) @ parameter_vector(changed) -
                  tau).max() <= 1e-10 * np.abs(tau).max()


# -- URDF robots, and Pinocchio's regressor as an independent oracle -----------------------------
@pytest.mark.parametrize("seed", range(3))
def test_urdf_robots_regressor_and_pinocchio_span(seed):
    """
    Check URDF robots, and our columns against Pinocchio's regressor.

    On random URDF chains (odd axes, rotated inertial frames, prismatic joints, branches): Y pi
    equals rnea, the identified-parameter model round-trips, and our columns span exactly the
    space of Pinocchio's joint-torque regressor (computeJointTorqueRegressor), so the base
    parameter count equals the rank of Pinocchio's regressor.
    """
    import pinocchio as pin
    from urdf_samples import PinocchioChain, random_urdf
    rng = np.random.default_rng(40 + seed)
    sample = random_urdf(rng, n=4 + seed, branches=seed != 1)
    model = RobotModel.from_urdf(sample.text, tip_link=sample.tip)
    q, qd, qdd = sample_states(model, 60, rng)      # continuous joints: within one turn
    Y = regressor(model, q, qd, qdd)
    tau = rnea(model, q, qd, qdd)
    assert np.abs(Y @ parameter_vector(model) - tau).max() <= 1e-10 * max(1.0, np.abs(tau).max())
    rebuilt = model_with_parameters(model, parameter_vector(model))
    assert np.allclose(rnea(rebuilt, q, qd, qdd), tau, rtol=1e-10, atol=1e-10)
    chain = PinocchioChain(sample.text, sample.chain, sample.tip)
    rows = []
    for k in range(q.shape[0]):
        Yp = pin.computeJointTorqueRegressor(chain.model, chain.data, chain.q(q[k]),
                                             chain.v(qd[k]), chain.v(qdd[k]))
        rows.append(Yp[chain.v_index])
    Yp = np.concatenate(rows)
    Yp = Yp[:, np.linalg.norm(Yp, axis=0) > 0]
    rigid = model.rigid()                  # Pinocchio's regressor has no rotors or friction
    ours = regressor(rigid, q, qd, qdd).reshape(-1, parameter_layout(rigid).size)
    ours = ours[:, np.linalg.norm(ours, axis=0) > 0]
    count = base_parameters(rigid).count
    assert column_rank(np.hstack([ours, Yp])) == column_rank(ours) == column_rank(Yp) == count
