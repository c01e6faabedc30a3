"""The pose error of an inverse-kinematics solution: position distance and rotation angle."""

import numpy as np
from scipy.spatial.transform import Rotation

from robot_dynamics_ros.core import frame_pose


def pose_errors(model, q, target, frame=None):
    """Return (position error [m], rotation angle [rad]) of frame ``frame`` at q from target."""
    T = frame_pose(model, q, frame)
    R_error = target[..., :3, :3] @ np.swapaxes(T[..., :3, :3], -1, -2)
    angle = np.linalg.norm(Rotation.from_matrix(R_error).as_rotvec(), axis=-1)
    return np.linalg.norm(T[..., :3, 3] - target[..., :3, 3], axis=-1), angle
