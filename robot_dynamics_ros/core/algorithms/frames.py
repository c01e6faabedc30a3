"""
Forward kinematics, frames, Jacobians of any frame and point with numpy, and Jdot qd.

The texts below the compiled route: ``route.py`` takes :func:`numpy_jacobian` as the checked
path of the tool Jacobian; ``kinematics.py`` holds the public ``jacobian`` (the compiled kernel
for the tool, :func:`numpy_jacobian` otherwise) and the twist.

Asada & Slotine 1986, ch. 2-3; Siciliano et al. 2009, eqs. 7.16-7.19.

All Cartesian results are in the world frame: the frame in which the file's gravity is given and
in which ``base`` places the robot (the robot's frame 0 when the file has no base transform).
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..inputs import joint_arrays
from ..model.cache import model_constant


def joint_transforms(model, q: np.ndarray) -> np.ndarray:
    """T_{i-1,i}(q) of the internal chain, shape q.shape + (4, 4), batched over leading dims."""
    ch = model.chain
    theta = ch.theta0 + np.where(ch.prismatic, 0.0, q)
    slide = np.where(ch.prismatic, q, 0.0)
    ct, st = np.cos(theta), np.sin(theta)
    ca, sa = np.cos(ch.alpha_prev), np.sin(ch.alpha_prev)
    T = np.zeros(q.shape + (4, 4))
    # [Rx(alpha_{i-1}) Rz(theta_i), p_{i-1,i}]: Renaud 1987's T_{i-1,i} with the general offset
    # p_prev + q (0, -sin alpha, cos alpha) of a prismatic joint (model.Chain)
    T[..., 0, 0], T[..., 0, 1], T[..., 0, 3] = ct, -st, ch.p_prev[:, 0]
    T[..., 1, 0], T[..., 1, 1], T[..., 1, 2] = ca * st, ca * ct, -sa
    T[..., 2, 0], T[..., 2, 1], T[..., 2, 2] = sa * st, sa * ct, ca
    T[..., 1, 3], T[..., 2, 3] = ch.p_prev[:, 1] - sa * slide, ch.p_prev[:, 2] + ca * slide
    T[..., 3, 3] = 1.0
    return T


def internal_frames(model, q: np.ndarray) -> np.ndarray:
    """Poses of the internal (joint-axis) frames relative to the robot base, (..., n, 4, 4)."""
    A = joint_transforms(model, q)
    frames = np.empty_like(A)
    frames[..., 0, :, :] = A[..., 0, :, :]
    for i in range(1, model.n):
        frames[..., i, :, :] = frames[..., i - 1, :, :] @ A[..., i, :, :]
    return frames


def forward_kinematics(model, q) -> np.ndarray:
    """
    Return the world poses of the robot base and every link frame of the file (its DH convention).

    Returns shape (n+1, 4, 4), or (N, n+1, 4, 4) for a batch: index 0 is the base (frame 0),
    index i the frame of link i.
    """
    (q,), _ = joint_arrays(model, q=q)
    frames = model.chain.base @ internal_frames(model, q) @ model.chain.link_offset
    base = np.broadcast_to(model.chain.base, q.shape[:-1] + (1, 4, 4))
    return np.concatenate([base, frames], axis=-3)


def tool_pose(model, q) -> np.ndarray:
    """World pose of the tool frame (the last link frame times the file's tool transform)."""
    (q,), _ = joint_arrays(model, q=q)
    return model.chain.base @ internal_frames(model, q)[..., -1, :, :] @ model.chain.flange


def frame_names(model) -> tuple[str, ...]:
    """
    Return the names ``kinematics.jacobian`` and the task-space functions accept for ``frame``.

    ``"tool"`` (the default), ``"base"``, and each joint's name for the frame of the link that
    joint moves (link i's frame of the file, as in :func:`forward_kinematics`).
    """
    return tuple(_named_frames(model))


def _named_frames(model) -> dict:
    def build(m):
        ch = m.chain
        frames = {"tool": (m.n, ch.flange), "base": (0, np.eye(4))}
        for i, name in enumerate(m.joint_names):
            frames.setdefault(name, (i + 1, ch.link_offset[i]))
        # models built from URDF may name their links: link_names[i] is link i (0: the base)
        for i, name in enumerate(getattr(m, "link_names", None) or ()):
            frames.setdefault(name, (i, np.eye(4) if i == 0 else ch.link_offset[i - 1]))
        return frames
    return model_constant(model, "named_frames", build)


def resolve_frame(model, frame) -> tuple[int, np.ndarray, str]:
    """
    Return (k, offset, name) of a frame: fixed to link k (0: the base) at the pose ``offset``.

    ``offset`` is the frame's pose in internal frame k (for k = 0: in the robot base frame 0).
    ``frame``: None or ``"tool"`` (the tool frame), ``"base"``, a joint name (the frame of the
    link it moves) or an index 0..n as in :func:`forward_kinematics` (0: base, i: link i).
    """
    frames = _named_frames(model)
    if frame is None:
        return frames["tool"] + ("tool",)
    if isinstance(frame, (int, np.integer)) and not isinstance(frame, bool):
        if not 0 <= frame <= model.n:
            raise InputError(f"frame: index {frame} out of range 0..{model.n} for robot "
                             f"'{model.name}'")
        k = int(frame)
        if k == 0:
            return 0, np.eye(4), "base"
        return k, model.chain.link_offset[k - 1], model.joint_names[k - 1]
    if isinstance(frame, str) and frame in frames:
        return frames[frame] + (frame,)
    raise InputError(f"frame: unknown frame {frame!r} for robot '{model.name}'; expected one of "
                     f"{list(frames)} or an index 0..{model.n}")


def _point_argument(point) -> np.ndarray | None:
    if point is None:
        return None
    p = None if np.iscomplexobj(point) else np.asarray(point, dtype=float)
    if p is None or p.shape != (3,) or not np.isfinite(p).all():
        raise InputError(f"point: expected 3 finite coordinates in the frame, got {point!r}")
    return p


REFERENCES = ("world", "local")


def _reference_argument(reference) -> str:
    if reference not in REFERENCES:
        raise InputError(f"reference: expected one of {list(REFERENCES)}, got {reference!r}")
    return reference


def frame_state(model, q: np.ndarray, link: int, offset: np.ndarray, point=None):
    """
    Return the world joint axes and origins, and a frame's pose and point (the Jacobian's data).

    z_i and p_i (the internal frame origins, on the axes), (..., n, 3); the world pose of the
    frame fixed to ``link`` at ``offset``; the world position of ``point`` (frame coordinates;
    None: the frame origin).
    """
    T = model.chain.base @ internal_frames(model, q)
    if link:
        pose = T[..., link - 1, :, :] @ offset
    else:
        pose = np.broadcast_to(model.chain.base @ offset, q.shape[:-1] + (4, 4))
    target = pose[..., :3, 3] if point is None else pose[..., :3, :3] @ point + pose[..., :3, 3]
    return T[..., :3, 2], T[..., :3, 3], pose, target


def frame_pose(model, q, frame=None) -> np.ndarray:
    """Return the world pose (4, 4) of a frame (see :func:`resolve_frame`); (N, 4, 4) batched."""
    (q,), _ = joint_arrays(model, q=q)
    link, offset, _ = resolve_frame(model, frame)
    return frame_state(model, q, link, offset)[2]


def cross(a, b):
    """Return a x b over the last axis (np.cross without its per-call overhead on small arrays)."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def _columns(model, z, p, target, link):
    """
    Return the geometric Jacobian's columns at ``target`` as (linear, angular), (..., n, 3).

    [z_i x (target - p_i); z_i] for a revolute joint, [z_i; 0] for a prismatic one (Siciliano et
    al. 2009, eqs. 7.18-7.19); joints after ``link`` do not move it.
    """
    revolute = ~model.chain.prismatic[:, None]
    moves = (np.arange(model.n) < link)[:, None]
    linear = np.where(moves, np.where(revolute, cross(z, target[..., None, :] - p), z), 0.0)
    angular = np.where(moves & revolute, z, 0.0)
    return linear, angular


def numpy_jacobian(model, q, frame, point, reference) -> np.ndarray:
    """Return ``kinematics.jacobian`` computed with numpy (any frame, point and reference)."""
    (q,), _ = joint_arrays(model, q=q)
    link, offset, _ = resolve_frame(model, frame)
    point, reference = _point_argument(point), _reference_argument(reference)
    z, p, pose, target = frame_state(model, q, link, offset, point)
    linear, angular = _columns(model, z, p, target, link)
    if reference == "local":
        R = pose[..., :3, :3]
        linear, angular = linear @ R, angular @ R        # rows v^T R = (R^T v)^T
    return np.concatenate([np.swapaxes(linear, -1, -2), np.swapaxes(angular, -1, -2)], axis=-2)


def jacobian_dot_qd(model, q, qd, frame=None, point=None, reference="world") -> np.ndarray:
    """
    Return Jdot(q, qd) qd for the Jacobian of ``kinematics.jacobian`` with the same arguments.

    The term of the frame's acceleration [a; wd] = J qdd + Jdot qd (Siciliano et al. 2009, eq.
    3.98; the resolved-acceleration term of Asada & Slotine 1986, Sect. 3.3): in world axes, the
    acceleration of the point and of the link at qdd = 0 (:func:`acceleration_bias`).  In the
    frame's axes (``reference="local"``), J_local = R^T J gives R^T (Jdot qd - w x J qd) (the
    angular rows: R^T wd, as w x w = 0).  Shape (6,) or (N, 6).
    """
    (q, qd), _ = joint_arrays(model, q=q, qd=qd)
    link, offset, _ = resolve_frame(model, frame)
    point, reference = _point_argument(point), _reference_argument(reference)
    z, p, pose, target = frame_state(model, q, link, offset, point)
    return frame_jacobian_dot_qd(model, qd, z, p, pose, target, link, reference)


def frame_jacobian_dot_qd(model, qd, z, p, pose, target, link, reference="world"):
    """Return Jdot qd from the data of :func:`frame_state` (see :func:`jacobian_dot_qd`)."""
    axes = [(model.chain.prismatic[i], *z[..., i, :].T, *p[..., i, :].T) for i in range(link)]
    rates = [qd[..., i] for i in range(link)]
    a, alpha, v, w = acceleration_bias(axes, rates, *target.T)
    a, alpha = np.stack(a, axis=-1), np.stack(alpha, axis=-1)
    if reference == "local":
        R = pose[..., :3, :3]
        a = ((a - cross(np.stack(w, axis=-1), np.stack(v, axis=-1)))[..., None, :] @ R)[..., 0, :]
        alpha = (alpha[..., None, :] @ R)[..., 0, :]
    return np.concatenate([a, alpha], axis=-1)


def acceleration_bias(axes, rates, tx, ty, tz):
    """
    Return (a, wd, v, w) of a point (tx, ty, tz) fixed to the last link, at qdd = 0.

    ``axes``: per joint (prismatic, zx, zy, zz, px, py, pz), the world axis z_i and a point p_i
    on it; ``rates``: the joint velocities.  Components are floats (one configuration) or numpy
    columns (a batch); results are triples of them.  The velocity v and acceleration a of a point
    o of the current link and the link's w and wd are carried from joint to joint (Asada & Slotine
    1986, eqs. 5-80 - 5-91, and Siciliano et al. 2009, eqs. 7.93-7.103, with qdd = 0): moving the
    point by r on a link, v += w x r and a += wd x r + w x (w x r); at a revolute joint
    wd += w x (qd z) and w += qd z; at a prismatic one a += 2 w x (qd z) (Coriolis) and
    v += qd z.  With qdd = 0, a and wd are Jdot qd.  The velocity part is
    ``spatial_inertia.joint_velocity``'s recursion written in world axes (X_i only moves the
    reference point, S_i qd_i = qd_i z_i), not another definition: it is kept inline because each
    step's w x r serves the acceleration too (``test_spatial.py`` checks v and w against it).
    """
    vx = vy = vz = ax = ay = az = wx = wy = wz = dx = dy = dz = 0.0
    ox, oy, oz = axes[0][4:] if axes else (tx, ty, tz)
    for (prismatic, zx, zy, zz, px, py, pz), rate in zip(axes, rates):
        rx, ry, rz = px - ox, py - oy, pz - oz
        cx, cy, cz = wy * rz - wz * ry, wz * rx - wx * rz, wx * ry - wy * rx      # w x r
        ax = ax + dy * rz - dz * ry + wy * cz - wz * cy
        ay = ay + dz * rx - dx * rz + wz * cx - wx * cz
        az = az + dx * ry - dy * rx + wx * cy - wy * cx
        vx, vy, vz = vx + cx, vy + cy, vz + cz
        ox, oy, oz = px, py, pz
        sx, sy, sz = rate * zx, rate * zy, rate * zz
        if prismatic:
            ax = ax + 2.0 * (wy * sz - wz * sy)
            ay = ay + 2.0 * (wz * sx - wx * sz)
            az = az + 2.0 * (wx * sy - wy * sx)
            vx, vy, vz = vx + sx, vy + sy, vz + sz
        else:
            dx, dy, dz = dx + wy * sz - wz * sy, dy + wz * sx - wx * sz, dz + wx * sy - wy * sx
            wx, wy, wz = wx + sx, wy + sy, wz + sz
    rx, ry, rz = tx - ox, ty - oy, tz - oz
    cx, cy, cz = wy * rz - wz * ry, wz * rx - wx * rz, wx * ry - wy * rx
    a = (ax + dy * rz - dz * ry + wy * cz - wz * cy, ay + dz * rx - dx * rz + wz * cx - wx * cz,
         az + dx * ry - dy * rx + wx * cy - wy * cx)
    zero = 0.0 * tx             # every result with the shape of the target's components
    return tuple(tuple(x + zero for x in triple)
                 for triple in (a, (dx, dy, dz), (vx + cx, vy + cy, vz + cz), (wx, wy, wz)))
