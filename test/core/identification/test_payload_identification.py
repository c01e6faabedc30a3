"""A payload identified from the difference of two recordings, at realistic noise."""

import numpy as np
import pytest

from identification_data import multisine
from robot_dynamics_ros.core import RobotModel, rnea
from robot_dynamics_ros.core.identification import identify_payload, parameter_vector
from robot_dynamics_ros.core.identification.parameters import parameter_layout

# -- identification ------------------------------------------------------------------------------
PUMA = RobotModel.named("puma560")


# -- payload -------------------------------------------------------------------------------------
PAYLOAD = dict(mass=2.0, com=[0.01, -0.02, 0.05],
               inertia={"ixx": 4e-3, "iyy": 5e-3, "izz": 3e-3, "ixy": 1e-4})


@pytest.mark.parametrize("with_reference", [False, True])
def test_payload_recovered_at_realistic_noise(with_reference):
    loaded = PUMA.with_payload(**PAYLOAD)
    t = np.linspace(0.0, 30.0, 3000)
    rng = np.random.default_rng(12)
    sigma = 0.005 * PUMA.effort_limit
    q, qd, qdd = multisine(PUMA, t, rng, amplitude=0.8)
    tau = rnea(loaded, q, qd, qdd) + rng.normal(size=q.shape) * sigma
    reference = None
    if with_reference:
        q0, qd0, qdd0 = multisine(PUMA, t, rng, amplitude=0.8)
        reference = (q0, qd0, qdd0, rnea(PUMA, q0, qd0, qdd0) + rng.normal(size=q.shape) * sigma)
    result = identify_payload(PUMA, q, qd, qdd, tau, reference=reference)
    assert abs(result.mass - 2.0) < 0.01 * 2.0
    assert np.abs(result.com - PAYLOAD["com"]).max() < 1e-3
    # written as the robot file's payload, it reproduces the loaded robot's torques
    rebuilt = PUMA.with_payload(**result.as_dict())
    assert np.allclose(parameter_vector(rebuilt)[parameter_layout(PUMA).link[-1]] -
                       parameter_vector(PUMA)[parameter_layout(PUMA).link[-1]],
                       result.parameters, atol=1e-12)
    assert np.all(result.residual_rms < 1.2 * sigma)
