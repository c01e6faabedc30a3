"""Per-link constants (model/bodies.py): the grouping against Renaud 1987's augmented bodies."""

import numpy as np

from robot_dynamics_ros.core.model.bodies import link_constants
from robot_dynamics_ros.core import RobotModel


# -- Renaud's 6R (Renaud 1987, example)
# ----------------------------------------------------------------
def test_augmented_parameters_follow_renauds_table():
    model = RobotModel.named("renaud6r")
    links = link_constants(model, "augmented")
    m, c = model.mass, model.com  # modified DH: file frames are the internal frames
    u = m[:, None] * c
    ms = np.cumsum(m[::-1])[::-1]
    a2, r4 = model.dh_a[2], model.dh_d[3]
    inertia = model.inertia
    k = [inertia[i] + m[i] * ((c[i] @ c[i]) * np.eye(3) - np.outer(c[i], c[i])) for i in range(6)]
    expected_u = [[0, 0, u[0, 2]], [u[1, 0] + ms[2] * a2, 0, 0], [0, u[2, 1] - ms[3] * r4, 0],
                  [0, 0, u[3, 2]], [0, u[4, 1], 0], [0, 0, u[5, 2]]]
    expected_k = [np.diag(k[0]), np.diag(k[1]) + ms[2] * a2 ** 2 * np.array([0, 1, 1]),
                  np.diag(k[2]) + ms[3] * r4 ** 2 * np.array([1, 0, 1])]
    expected_k += [np.diag(k[i]) for i in (3, 4, 5)]
    for i, link in enumerate(links):
        np.testing.assert_allclose(link.u, expected_u[i], atol=1e-15)
        # no products of inertia
        np.testing.assert_allclose(link.k, np.diag(expected_k[i]), atol=1e-15)


def test_full_grouping_finds_y5_minus_z6():
    """alpha_5 = pi/2 makes z_6 = -y_5: the first moments y^5 and z^6 only appear as y^5 - z^6."""
    model = RobotModel.named("renaud6r")
    links = link_constants(model, "full")
    y5, z6 = model.mass[4] * model.com[4, 1], model.mass[5] * model.com[5, 2]
    np.testing.assert_allclose(links[5].u, [0.0, 0.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(links[4].u, [0.0, y5 - z6, 0.0], atol=1e-15)
