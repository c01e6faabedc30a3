"""
Physical consistency of identified parameters: the margin, the check, the projection (physical.py).

Oracle: the robot-file validator's own test (consistency_problems) and the eigenvalues of the
inertia about the centre of mass, for parameter sets placed on, just inside and just outside the
boundary of the physically consistent set, as different CPUs' rounding leaves a solver's answer.
"""

import numpy as np

from robot_dynamics_ros.core import RobotModel
from robot_dynamics_ros.core.identification import consistency_problems, parameter_vector
from robot_dynamics_ros.core.identification.parameters import link_parameters, parameter_layout
from robot_dynamics_ros.core.identification.physical import CHECK, checked_consistent

PUMA = RobotModel.named("puma560")


def test_consistency_check_projects_rounding_and_refuses_real_violations():
    """
    A solver's answer on the cone's boundary is made safely consistent, whatever its last bits.

    A link turned into a thin rod (a principal moment exactly 0, where the LMI fit lands when the
    data push there) is taken by ``checked_consistent`` with the moment at -1e-12, 0 and +1e-12 of
    its size (what different BLAS kernels give): always projected to the same margin, so the
    robot-file validator accepts it with room to spare; a link clearly outside is refused.
    """
    layout = parameter_layout(PUMA)
    results = []
    for shift in (-1e-12, 0.0, 1e-12):
        pi = parameter_vector(PUMA)
        rod = np.diag([0.03, 0.03, shift * 0.03])       # about the CoM, along z
        pi[layout.link[3]] = link_parameters(0.8, [0.0, 0.02, 0.0], rod)
        fixed = checked_consistent(PUMA, pi)
        assert fixed is not None and consistency_problems(PUMA, fixed) == []
        theta = fixed[layout.link[3]]
        c = theta[1:4] / theta[0]
        I_com = np.array([[theta[4], theta[5], theta[6]], [theta[5], theta[7], theta[8]],
                          [theta[6], theta[8], theta[9]]]) - theta[0] * (c @ c * np.eye(3) -
                                                                         np.outer(c, c))
        smallest = np.linalg.eigvalsh(I_com)[0]
        assert smallest > 1e-3 * CHECK * 0.03       # far above the validator's 1e-9 x 0.03
        assert np.abs(fixed - pi).max() < 1e-6       # and otherwise unchanged
        results.append(fixed)
    assert np.allclose(results[0], results[2], rtol=0, atol=1e-12)
    pi = parameter_vector(PUMA)
    pi[layout.link[3]] = link_parameters(0.8, [0.0, 0.02, 0.0], np.diag([0.03, 0.03, -0.01]))
    assert checked_consistent(PUMA, pi) is None
    pi = parameter_vector(PUMA)
    pi[layout.viscous[2]] = -0.5
    assert checked_consistent(PUMA, pi) is None
