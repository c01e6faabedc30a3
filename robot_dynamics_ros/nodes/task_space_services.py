"""
The task-space services of dynamics_service_node (``core.task_space``), one function each.

  ``get_operational_space_model``  GetOperationalSpaceModel  Lambda, mu, p, J, J_bar (7.130-7.138)
  ``get_manipulability``           GetManipulability         ellipsoid axes, directions, centre
  ``solve_inverse_kinematics``     SolveInverseKinematics    q for a frame's pose, from a seed
  ``get_payload_capacity``         GetPayloadCapacity        largest payload mass, binding joint

Each function is ``compute(request, response, dynamics, order)`` as the node's other services
(``dynamics_service.DynamicsServiceNode.provide``): ``order`` reads the request's joint vectors in
the model's order and writes joint-space results back in the request's order; a bad request
raises (the node answers ``success: false`` with the reason).  The model is the node's current
one, payload parameters included.
"""
from __future__ import annotations

import math

import numpy as np

from ..core import InfeasibleError
from ..core.task_space import (dynamic_manipulability, inverse_kinematics,
                               operational_space_model, payload_capacity)
from ..core.task_space.task import parse_task, planar_task_rows, ROW_NAMES
from ..messages.conversions import MAX_JOINT_VALUE, MessageRejected

# A target quaternion further than this from unit length is refused rather than normalised.
QUATERNION_NORM_TOLERANCE = 1e-3


def _frame(request):
    return request.frame or None


def _flat(order, array, what: str) -> list:
    """Return a task-space array flattened row-major (refused if not finite)."""
    return order._replace(index=None).out(np.asarray(array).reshape(-1), what)


def operational_space(request, response, dyn, order):
    """Answer GetOperationalSpaceModel: the model of ``core.task_space.operational_space``."""
    n = dyn.model.n
    q = order.vector(request, "position", n)
    qd = order.vector(request, "velocity", n, allow_empty=True)
    osm = operational_space_model(dyn.model, q, qd, task=parse_task(request.task or "pose"),
                                  frame=_frame(request))
    J, J_bar = osm.J, osm.J_bar
    if order.index is not None:
        J, J_bar = J[:, order.index], J_bar[order.index, :]
    response.frame = osm.frame
    response.task_rows = [ROW_NAMES[r] for r in osm.rows]
    response.task_size = len(osm.rows)
    response.inertia = _flat(order, osm.Lambda, "inertia")
    response.coriolis = _flat(order, osm.mu, "coriolis")
    response.gravity = _flat(order, osm.p, "gravity")
    response.jacobian = _flat(order, J, "jacobian")
    response.jacobian_inverse = _flat(order, J_bar, "jacobian_inverse")


def manipulability(request, response, dyn, order):
    """Answer GetManipulability: ``core.task_space.dynamic_manipulability`` at rest."""
    q = order.vector(request, "position", dyn.model.n)
    task = parse_task(request.task) if request.task else \
        planar_task_rows(dyn.model, q) or "position"
    ellipsoid = dynamic_manipulability(dyn.model, q, task=task, frame=_frame(request),
                                       torque_limited=request.torque_limited)
    response.task_rows = [ROW_NAMES[r] for r in ellipsoid.rows]
    response.task_size = len(ellipsoid.rows)
    response.semi_axes = _flat(order, ellipsoid.semi_axes, "semi_axes")
    response.directions = _flat(order, ellipsoid.directions, "directions")
    response.centre = _flat(order, ellipsoid.centre, "centre")
    response.matrix = _flat(order, ellipsoid.matrix, "matrix")


def target_pose(pose) -> np.ndarray:
    """Return the 4x4 matrix of a geometry_msgs/Pose (MessageRejected for a bad quaternion)."""
    p, o = pose.position, pose.orientation
    values = np.array([p.x, p.y, p.z, o.x, o.y, o.z, o.w], dtype=float)
    if not np.isfinite(values).all():
        raise MessageRejected("non-finite", "target: the pose has non-finite values")
    if not (np.abs(values) <= MAX_JOINT_VALUE).all():       # the bound of every node's input
        raise MessageRejected("out of range", f"target: a pose value beyond "
                                              f"{MAX_JOINT_VALUE:g} ({values.tolist()})")
    x, y, z, w = values[3:]
    norm = math.sqrt(x * x + y * y + z * z + w * w)
    if abs(norm - 1.0) > QUATERNION_NORM_TOLERANCE:
        raise MessageRejected("quaternion", f"target.orientation: not a unit quaternion (norm "
                                            f"{norm:.6g})")
    x, y, z, w = x / norm, y / norm, z / norm, w / norm
    T = np.eye(4)
    T[:3, :3] = [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                 [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                 [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]
    T[:3, 3] = values[:3]
    return T


def solve_inverse_kinematics(request, response, dyn, order):
    """Answer SolveInverseKinematics; a target not reached answers the closest q found."""
    seed = None if len(request.seed) == 0 else order.vector(request, "seed", dyn.model.n)
    result = inverse_kinematics(dyn.model, target_pose(request.target), q0=seed,
                                frame=_frame(request), position_only=request.position_only)
    response.position = order.out(result.q, "position")
    response.residual = result.residual
    response.position_error = result.position_error
    response.orientation_error = result.orientation_error
    response.iterations = result.iterations
    response.joint_names = list(order.names)        # also when the answer is a failure
    if not result.success:
        raise InfeasibleError(f"target not reached: the closest configuration found is "
                              f"{result.position_error:.3g} m and {result.orientation_error:.3g} "
                              f"rad away ({result.attempts} attempts); it is in 'position'")


def payload(request, response, dyn, order):
    """Answer GetPayloadCapacity: ``core.task_space.payload_capacity`` at (q, qd, qdd)."""
    n = dyn.model.n
    q = order.vector(request, "position", n)
    qd = order.vector(request, "velocity", n, allow_empty=True)
    qdd = order.vector(request, "acceleration", n, allow_empty=True)
    com = request.com if len(request.com) else (0.0, 0.0, 0.0)
    if not (np.abs(np.asarray(com, dtype=float)) <= MAX_JOINT_VALUE).all():
        raise MessageRejected("out of range", f"com: not finite or beyond {MAX_JOINT_VALUE:g}: "
                                              f"{list(com)}")
    capacity = payload_capacity(dyn.model, q, qd, qdd, com=com)
    response.mass = capacity.mass
    response.binding_joint = capacity.binding_joint or ""
    response.effort = order.out(capacity.torques)
