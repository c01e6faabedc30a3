"""
dynamics_service_node: the dynamics of the robot as services, under the node's namespace.

  ``get_mass_matrix``       robot_dynamics_interfaces/srv/GetMassMatrix       B(q), row-major n x n
  ``get_inverse_dynamics``  robot_dynamics_interfaces/srv/GetInverseDynamics  RNEA(q, qd, qdd)
  ``get_gravity_torques``   robot_dynamics_interfaces/srv/GetGravityTorques   g(q)
  ``get_forward_dynamics``  robot_dynamics_interfaces/srv/GetForwardDynamics  qdd = B^-1 (tau - n)

and the task-space services of ``nodes.task_space_services`` (``get_operational_space_model``,
``get_manipulability``, ``solve_inverse_kinematics``, ``get_payload_capacity``).

Requests give ``joint_names`` (empty = the model's joint order; otherwise each joint of the robot
exactly once, in any order) and the joint vectors in that order; empty velocity / acceleration /
effort mean zeros.  Answers are in the request's order (``joint_names`` of the response).  A bad
request gets ``success: false`` and a ``message`` saying what is wrong (``nodes.errors``); nothing
is computed.  The payload parameters of ``nodes.base`` apply to every answer.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from robot_dynamics_interfaces.srv import (GetForwardDynamics, GetGravityTorques,
                                           GetInverseDynamics, GetManipulability, GetMassMatrix,
                                           GetOperationalSpaceModel, GetPayloadCapacity,
                                           SolveInverseKinematics)

from ..core import joint_index
from ..core.joint_names import inverse
from ..messages.conversions import MessageRejected, request_vector
from .base import DynamicsNode, main_for
from . import task_space_services as task_space
from .errors import service_guard


class RequestOrder(NamedTuple):
    """A request's joint order: ``index`` maps it onto the model's (None: the model's own)."""

    index: np.ndarray | None          # model_vector[index] = request_vector
    names: tuple

    def vector(self, request, field: str, n: int, allow_empty: bool = False) -> np.ndarray:
        """Request field ``field`` in the model's order (empty: zeros when ``allow_empty``)."""
        values = getattr(request, field)
        return request_vector(values, self.index, n, field, self.names, allow_empty)

    def out(self, vector: np.ndarray, what: str = "effort") -> list:
        """
        ``vector`` (model order) in the request's order.

        A result that is not finite (huge but finite inputs can overflow) is refused, never
        answered with success.
        """
        if not np.isfinite(vector).all():
            raise MessageRejected("non-finite output", f"{what}: result not finite for this "
                                                       "request (inputs too large?)")
        return (vector if self.index is None else vector[self.index]).tolist()


class DynamicsServiceNode(DynamicsNode):
    """Mass matrix, inverse / forward dynamics and gravity torques on request."""

    def __init__(self, node_name: str = "dynamics_service", **node_kwargs):
        super().__init__(node_name, **node_kwargs)
        self.provide(GetMassMatrix, "get_mass_matrix", self.mass_matrix)
        self.provide(GetInverseDynamics, "get_inverse_dynamics", self.inverse_dynamics)
        self.provide(GetGravityTorques, "get_gravity_torques", self.gravity_torques)
        self.provide(GetForwardDynamics, "get_forward_dynamics", self.forward_dynamics)
        self.provide(GetOperationalSpaceModel, "get_operational_space_model",
                     task_space.operational_space)
        self.provide(GetManipulability, "get_manipulability", task_space.manipulability)
        self.provide(SolveInverseKinematics, "solve_inverse_kinematics",
                     task_space.solve_inverse_kinematics)
        self.provide(GetPayloadCapacity, "get_payload_capacity", task_space.payload)
        self.get_logger().info(f"dynamics services for {self.robot_label} ready")

    def provide(self, srv_type, name: str, compute):
        """Serve ``name`` with ``compute(request, response, dynamics, order)`` under the guard."""
        def answer(request, response):
            dynamics = self.require_model()          # one model for the whole answer
            order = self.request_order(request.joint_names, dynamics.model)
            compute(request, response, dynamics, order)
            response.joint_names = list(order.names)
        return self.create_service(srv_type, name, service_guard(self.get_logger(), name, answer))

    @staticmethod
    def request_order(joint_names, model) -> RequestOrder:
        """Read a request's ``joint_names``: empty, or each model joint exactly once."""
        if len(joint_names) == 0:
            return RequestOrder(None, model.joint_names)
        names = tuple(joint_names)
        index = inverse(joint_index(model.joint_names, names, "joint_names", allow_extra=False))
        return RequestOrder(index, names)

    @staticmethod
    def mass_matrix(request, response, dyn, order):
        n = dyn.model.n
        B = dyn.mass_matrix(order.vector(request, "position", n))
        if order.index is not None:
            B = B[np.ix_(order.index, order.index)]
        response.size = n
        response.mass_matrix = RequestOrder(None, order.names).out(B.reshape(-1), "mass_matrix")

    @staticmethod
    def inverse_dynamics(request, response, dyn, order):
        n = dyn.model.n
        q = order.vector(request, "position", n)
        qd = order.vector(request, "velocity", n, allow_empty=True)
        qdd = order.vector(request, "acceleration", n, allow_empty=True)
        response.effort = order.out(dyn.rnea(q, qd, qdd))

    @staticmethod
    def gravity_torques(request, response, dyn, order):
        q = order.vector(request, "position", dyn.model.n)
        response.effort = order.out(dyn.gravity_torques(q))

    @staticmethod
    def forward_dynamics(request, response, dyn, order):
        n = dyn.model.n
        q = order.vector(request, "position", n)
        qd = order.vector(request, "velocity", n, allow_empty=True)
        tau = order.vector(request, "effort", n, allow_empty=True)
        response.acceleration = order.out(dyn.forward_dynamics(q, qd, tau), "acceleration")


main = main_for(DynamicsServiceNode)

if __name__ == "__main__":
    main()
