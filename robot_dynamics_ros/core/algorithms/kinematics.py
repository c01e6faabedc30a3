"""
Kinematics as the package exports it: the frames of ``frames.py`` and the Jacobian on the route.

Asada & Slotine 1986, ch. 2-3; Siciliano et al. 2009, eqs. 7.16-7.19.  :func:`jacobian` of the
tool (world axes) is the compiled kernel of ``route.py``; any other frame, point or reference
is ``frames.numpy_jacobian``.  All Cartesian results are in the world frame: the frame in which
the file's gravity is given and in which ``base`` places the robot.
"""
from __future__ import annotations

import numpy as np

from ..inputs import joint_arrays
from .frames import (_columns, _point_argument, acceleration_bias, cross, forward_kinematics,
                     frame_jacobian_dot_qd, frame_names, frame_pose, frame_state,
                     internal_frames, jacobian_dot_qd, joint_transforms, numpy_jacobian,
                     resolve_frame, tool_pose)
from .route import bound

__all__ = ["jacobian", "end_effector_twist", "forward_kinematics", "tool_pose", "frame_pose",
           "frame_names", "resolve_frame", "frame_state", "internal_frames", "joint_transforms",
           "jacobian_dot_qd", "frame_jacobian_dot_qd", "acceleration_bias", "cross",
           "numpy_jacobian", "_columns", "_point_argument"]


def jacobian(model, q, frame=None, point=None, reference="world") -> np.ndarray:
    """
    Return the geometric Jacobian of a frame, rows [v; w]: shape (6, n) or (N, 6, n).

    v is the velocity of a point fixed to the frame's link (``point``, in the frame's
    coordinates; default the frame origin), w the link's angular velocity.  ``frame``: the tool
    (default), the base, a joint name or an index (see :func:`resolve_frame`).  ``reference``:
    ``"world"`` (world axes; the default, and what ``jacobian(model, q)`` has always returned: the
    tool point) or ``"local"`` (the frame's own axes, Pinocchio's LOCAL).  Column i is
    [z_i x (p - p_i); z_i] for a revolute joint and [z_i; 0] for a prismatic one (Siciliano et al.
    2009, eqs. 7.18-7.19; Asada & Slotine 1986, eqs. 3-26/3-27 with 3-29 corrected:
    r_{i-1,e} = p_e - o_{i-1}); joints beyond the frame's link give zero columns.
    """
    if (frame is None or frame == "tool") and point is None and reference == "world":
        return bound(model).jacobian(q)
    return numpy_jacobian(model, q, frame, point, reference)


def end_effector_twist(model, q, qd, frame=None, point=None, reference="world") -> np.ndarray:
    """
    Return the twist [v; w] = J(q) qd of a frame (the tool by default): shape (6,) or (N, 6).

    Siciliano et al. 2009's (3.4) v_e = J qd; the arguments are those of :func:`jacobian`.
    """
    (q, qd), _ = joint_arrays(model, q=q, qd=qd)
    return np.einsum("...ij,...j->...i", jacobian(model, q, frame, point, reference), qd)
