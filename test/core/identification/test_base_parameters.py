"""Base parameters: counts by hand and from the literature, and every torque reproduced."""

import numpy as np
import pytest

from identification_cases import ALL, column_rank
from random_robots import random_state
from robot_dynamics_ros.core import RobotModel, rnea
from robot_dynamics_ros.core.identification import base_parameters, parameter_names, regressor


# -- base parameters -----------------------------------------------------------------------------
def seed_regressor_7_84(q, qd, qdd, a1=1.0, a2=1.0, kr1=100.0, kr2=100.0, g=9.81):
    """
    Siciliano et al. 2009, eq.

    7.84: the planar arm's 2 x 8 regressor for pi (7.83), samples (N, 2).
    """
    c1, c2, s2, c12 = np.cos(q[:, 0]), np.cos(q[:, 1]), np.sin(q[:, 1]), np.cos(q.sum(axis=1))
    d1, d2 = qd.T
    a_1, a_2 = qdd.T
    Y = np.zeros((q.shape[0], 2, 8))
    Y[:, 0, 0] = a1 ** 2 * a_1 + a1 * g * c1
    Y[:, 0, 1] = 2 * a1 * a_1 + g * c1
    Y[:, 0, 2] = a_1
    Y[:, 0, 3] = kr1 ** 2 * a_1
    Y[:, 0, 4] = ((a1 ** 2 + 2 * a1 * a2 * c2 + a2 ** 2) * a_1 + (a1 * a2 * c2 + a2 ** 2) * a_2
                  - 2 * a1 * a2 * s2 * d1 * d2 - a1 * a2 * s2 * d2 ** 2
                  + a1 * g * c1 + a2 * g * c12)
    Y[:, 0, 5] = ((2 * a1 * c2 + 2 * a2) * a_1 + (a1 * c2 + 2 * a2) * a_2 - 2 * a1 * s2 * d1 * d2
                  - a1 * s2 * d2 ** 2 + g * c12)
    Y[:, 0, 6] = a_1 + a_2
    Y[:, 0, 7] = kr2 * a_2
    Y[:, 1, 4] = (a1 * a2 * c2 + a2 ** 2) * a_1 + a2 ** 2 * \
        a_2 + a1 * a2 * s2 * d1 ** 2 + a2 * g * c12
    Y[:, 1, 5] = (a1 * c2 + 2 * a2) * a_1 + 2 * a2 * a_2 + a1 * s2 * d1 ** 2 + g * c12
    Y[:, 1, 6] = a_1 + a_2
    Y[:, 1, 7] = kr2 * a_1 + kr2 ** 2 * a_2
    return Y


def test_planar_arm_counts_by_hand_example_7_2():
    """
    Siciliano et al. 2009, Example 7.2.

    By hand from (7.84): without motors (columns 4 and 8 dropped) the columns obey col1 = a1^2
    col3 + a1 [g c1; 0], col2 = 2 a1 col3 + [g c1; 0] and col5 - a2 col6 = col1 - a2^2 col7, so
    6 - 2 = 4 are independent; with motors col4 = kr1^2 col3 and col8 is new: 5 (the book's
    footnote 6).  Our pi also has the first moments across the link (m l_Cy), which the book's
    (7.83) leaves out because its CoMs lie on the links: 2 more.
    """
    model = RobotModel.named("planar2")
    rng = np.random.default_rng(4)
    q, qd, qdd = random_state(model, rng, batch=200)
    Ys = seed_regressor_7_84(q, qd, qdd)
    # eq. 7.83's parameters with Example 7.2's data
    pi_seed = np.array([55.0, -25.0, 22.51, 0.01, 50.0, -25.0, 22.5, 0.01])
    assert np.allclose(Ys @ pi_seed, rnea(model, q, qd, qdd), rtol=1e-12, atol=1e-9)
    rigid_cols = [0, 1, 2, 4, 5, 6]
    assert column_rank(Ys[..., rigid_cols].reshape(-1, 6)) == 4
    assert column_rank(Ys.reshape(-1, 8)) == 5
    assert base_parameters(model.rigid()).count == 6 and base_parameters(model).count == 7
    # our columns of the book's parameters (m, mx, Izz per link) span exactly the book's space
    Y = regressor(model.rigid(), q, qd, qdd).reshape(-1, 20)
    names = parameter_names(model.rigid())
    ours = Y[:, [names.index(f"{k}[joint{i}]") for i in (1, 2) for k in ("m", "mx", "Izz")]]
    assert column_rank(ours) == 4
    assert column_rank(np.hstack([ours, Ys[..., rigid_cols].reshape(-1, 6)])) == 4
    # and the book's grouping: m2 folds into link 1's moments with a1 and a1^2 (a1 = 1 m)
    expressions = base_parameters(model.rigid()).expressions()
    assert "Izz[joint1]R = Izz[joint1] + m[joint2]" in expressions
    assert "mx[joint1]R = mx[joint1] + m[joint2]" in expressions


def test_puma560_counts_against_the_literature():
    """
    Check the Puma 560's counts against the literature.

    36 rigid-body base parameters (Gautier and Khalil 1990; the same structure, a 6R arm whose
    first axis is vertical, has 36 in FIGAROH's UR10 study).  With rotors: 40 (Im1 folds into
    Izz1, and Im2 into Izz2 because axis 2 is perpendicular to axis 1, as in Khalil and
    Dombre's RX-90 example); with friction 12 more.
    """
    puma = RobotModel.named("puma560")
    assert base_parameters(puma.rigid()).count == 36
    assert base_parameters(puma.without_friction()).count == 40
    assert base_parameters(puma).count == 52
    expressions = base_parameters(puma).expressions()
    # a hand check of Khalil's grouping at joint 1 (vertical axis): ZZ1R = ZZ1 + kr1^2 Im1 + YY2
    # + YY3 + (a2^2 + d3^2) M3 + 2 d3 MZ3 + ..., with kr1 = -62.6111, a2 = 0.4318, d3 = 0.15005
    zz1 = next(e for e in expressions if e.startswith("Izz[joint1]R"))
    assert f"{62.6111 ** 2:.6g} Im[joint1]" in zz1
    assert "+ Iyy[joint2] +" in zz1 and "+ Iyy[joint3] +" in zz1
    assert f"{0.4318 ** 2 + 0.15005 ** 2:.6g} m[joint3]" in zz1
    assert f"{2 * 0.15005:.6g} mz[joint3]" in zz1


@pytest.mark.parametrize("model", ALL[::2], ids=lambda m: m.name)
def test_base_parameters_reproduce_every_torque(model):
    """
    Check that the base parameters reproduce every torque.

    tau = Y pi = W_b (K pi) for other parameter vectors and fresh samples; the kept columns are
    independent there.
    """
    base = base_parameters(model)
    rng = np.random.default_rng(5)
    q, qd, qdd = random_state(model, rng, batch=100)
    Y = regressor(model, q, qd, qdd)
    for _ in range(3):
        pi = rng.normal(size=Y.shape[-1])
        assert np.allclose(base.columns(Y) @ base.values(pi), Y @ pi,
                           rtol=0, atol=1e-9 * np.abs(Y @ pi).max())
    assert column_rank(base.columns(Y).reshape(-1, base.count)) == base.count
    assert base.rank_gap > 1e6
    assert len(base.expressions()) == base.count
