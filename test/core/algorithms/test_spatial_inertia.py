"""
Spatial inertias and forces carried to the parent frame, motion to the child (spatial_inertia.py).

Oracle: Featherstone's 6x6 matrices built with numpy (Rigid Body Dynamics Algorithms, Sect. 2.8
and 2.13): the motion transform X from frame i-1 to frame i of T_{i-1,i} = Rx(alpha)
Trans(a, e, r) Rz(theta) (modified DH when e = 0; the general offset of model.Chain otherwise),
the force transform X^* = X^-T, and I_{i-1} = X^T I_i X.
"""

import numpy as np

from robot_dynamics_ros.core.algorithms import spatial_inertia as si
from robot_dynamics_ros.core.transforms import skew


def pack(M) -> list:
    """Return a symmetric 6x6 [[A, B], [B^T, C]] as the 21 numbers of spatial_inertia.py."""
    def upper(X):
        return [X[0, 0], X[1, 1], X[2, 2], X[0, 1], X[0, 2], X[1, 2]]
    return upper(M[:3, :3]) + list(M[:3, 3:].ravel()) + upper(M[3:, 3:])


def transform(theta, alpha, a, e, r) -> np.ndarray:
    """Return X (6x6): spatial motion at O_{i-1}, frame i-1 -> at O_i, frame i."""
    ct, st, ca, sa = np.cos(theta), np.sin(theta), np.cos(alpha), np.sin(alpha)
    R = (np.array([[1, 0, 0], [0, ca, -sa], [0, sa, ca]])
         @ np.array([[ct, -st, 0], [st, ct, 0], [0, 0, 1]]))
    p = np.array([a, e * ca - r * sa, e * sa + r * ca])
    X = np.zeros((6, 6))
    X[:3, :3] = X[3:, 3:] = R.T
    X[3:, :3] = -R.T @ skew(p)
    return X


def cases(count=20):
    rng = np.random.default_rng(8)
    quarter = [0.0, np.pi / 2, -np.pi / 2, np.pi]
    for k in range(count):
        theta, alpha = rng.uniform(-np.pi, np.pi, 2)
        if k % 3 == 0:
            alpha = quarter[k % 4]           # the exact 0/+-1 sines of most robots
        e = 0.0 if k % 2 else rng.normal()     # DH rows and general offsets
        yield theta, alpha, rng.normal(), e, rng.normal(), rng


def test_inertia_to_parent_is_x_transpose_i_x():
    for theta, alpha, a, e, r, rng in cases():
        S = rng.normal(size=(6, 6))
        S = S + S.T
        X = transform(theta, alpha, a, e, r)
        got = si.to_parent(pack(S), 0, np.cos(theta), np.sin(theta), a, e, r, np.cos(alpha),
                           np.sin(alpha))
        np.testing.assert_allclose(got, pack(X.T @ S @ X), rtol=0, atol=1e-13 * np.abs(S).max())


def test_rigid_body_transfer_is_the_special_case():
    for theta, alpha, a, e, r, rng in cases():
        m, h = rng.uniform(0.1, 3.0), rng.normal(size=3)
        tensor = rng.normal(size=(3, 3))
        tensor = tensor @ tensor.T + np.eye(3)
        spatial = np.block([[tensor, skew(h)], [skew(h).T, m * np.eye(3)]])
        args = (np.cos(theta), np.sin(theta), a, e, r, np.cos(alpha), np.sin(alpha))
        general = si.to_parent(pack(spatial), 0, *args)
        rigid = si.rigid_to_parent(m, *h, tensor[0, 0], tensor[1, 1], tensor[2, 2],
                                   tensor[0, 1], tensor[0, 2], tensor[1, 2], *args)
        hx, hy, hz = rigid[1:4]
        expected = pack(np.block([[np.zeros((3, 3)), skew([hx, hy, hz])],
                                  [skew([hx, hy, hz]).T, rigid[0] * np.eye(3)]]))
        np.testing.assert_allclose(general[6:], expected[6:], atol=1e-12)     # B = h^, C = m E
        np.testing.assert_allclose(general[:6], rigid[4:], atol=1e-12)        # A = I


def test_force_to_parent_is_the_force_transform():
    for theta, alpha, a, e, r, rng in cases():
        f = rng.normal(size=6)
        X = transform(theta, alpha, a, e, r)
        got = si.force_to_parent(*f, np.cos(theta), np.sin(theta), a, e, r, np.cos(alpha),
                                 np.sin(alpha))
        np.testing.assert_allclose(got, X.T @ f, atol=1e-13)


def test_joint_velocity_is_x_v_plus_s_qd():
    """v_i = X_i v_{i-1} + S_i qd_i, S = (z; 0) or (0; z); its angular part and X alone."""
    for theta, alpha, a, e, r, rng in cases():
        v, qd = rng.normal(size=6), rng.normal()
        X = transform(theta, alpha, a, e, r)
        ca, sa, ct, st = np.cos(alpha), np.sin(alpha), np.cos(theta), np.sin(theta)
        p = (a, e * ca - r * sa, e * sa + r * ca)           # O_i in frame i-1
        np.testing.assert_allclose(si.motion_to_child(ca, sa, ct, st, *p, *v), X @ v,
                                   atol=1e-13 * (1 + np.abs(v).max()))
        for prismatic, axis in ((False, 2), (True, 5)):
            expected = X @ v
            expected[axis] += qd
            got = si.joint_velocity(prismatic, qd, ca, sa, ct, st, *p, *v)
            np.testing.assert_allclose(got, expected, atol=1e-13 * (1 + np.abs(v).max()))
            np.testing.assert_allclose(si.angular_velocity(prismatic, qd, ca, sa, ct, st, *v[:3]),
                                       expected[:3], atol=1e-13 * (1 + np.abs(v).max()))
