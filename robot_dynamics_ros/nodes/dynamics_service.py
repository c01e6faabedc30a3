"""dynamics_service_node: the dynamics of the robot as services, under the node's namespace.

  ``get_mass_matrix``       robot_dynamics_interfaces/srv/GetMassMatrix       B(q), row-major n x n
  ``get_inverse_dynamics``  robot_dynamics_interfaces/srv/GetInverseDynamics  RNEA(q, qd, qdd)
  ``get_gravity_torques``   robot_dynamics_interfaces/srv/GetGravityTorques   g(q)
  ``get_forward_dynamics``  robot_dynamics_interfaces/srv/GetForwardDynamics  qdd = B^-1 (tau - n)

Requests give ``joint_names`` (empty = the model's joint order; otherwise each joint of the robot
exactly once, in any order) and the joint vectors in that order; empty velocity / acceleration /
effort mean zeros.  Answers are in the request's order (``joint_names`` of the response).  A bad
request gets ``success: false`` and a ``message`` saying what is wrong; nothing is computed.
The payload parameters of ``common`` apply to every answer.
"""
from __future__ import annotations

import numpy as np
from robot_dynamics_interfaces.srv import (GetForwardDynamics, GetGravityTorques, GetInverseDynamics,
                                           GetMassMatrix)

from ..ros_messages import MessageRejected, request_vector
from .common import DynamicsNode, main_for


class DynamicsServiceNode(DynamicsNode):
    def __init__(self, node_name: str = "dynamics_service", **node_kwargs):
        super().__init__(node_name, **node_kwargs)
        self.create_service(GetMassMatrix, "get_mass_matrix", self._answer(self.mass_matrix))
        self.create_service(GetInverseDynamics, "get_inverse_dynamics", self._answer(self.inverse_dynamics))
        self.create_service(GetGravityTorques, "get_gravity_torques", self._answer(self.gravity_torques))
        self.create_service(GetForwardDynamics, "get_forward_dynamics", self._answer(self.forward_dynamics))
        self.get_logger().info(f"dynamics services for '{self.dynamics.model.name}' ready")

    def _answer(self, compute):
        """Service callback around ``compute(request, response, dynamics, index, names)``."""
        def callback(request, response):
            dyn = self.dynamics
            try:
                index, names = self._request_order(request.joint_names, dyn.model)
                compute(request, response, dyn, index, names)
                response.joint_names = list(names)
                response.success, response.message = True, ""
            except ValueError as exc:     # MessageRejected, or the core's (e.g. singular mass matrix)
                response.success, response.message = False, str(exc)
            except Exception as exc:  # noqa: BLE001 -- a request must never crash the node
                response.success, response.message = False, f"internal error {type(exc).__name__}: {exc}"
            if not response.success:
                self.get_logger().warning(f"{compute.__name__} request rejected: {response.message}")
            return response
        return callback

    @staticmethod
    def _request_order(joint_names, model):
        """(index such that model_vector[index] = request_vector, or None; names in request order)."""
        if len(joint_names) == 0:
            return None, model.joint_names
        names = tuple(joint_names)
        unknown = [n for n in names if n not in model.joint_names]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        missing = [n for n in model.joint_names if n not in names]
        if unknown or duplicates or missing:
            parts = [f"unknown {unknown}" if unknown else "", f"repeated {duplicates}" if duplicates else "",
                     f"missing {missing}" if missing else ""]
            raise MessageRejected("joint_names", "joint_names: " + ", ".join(p for p in parts if p)
                                  + f"; expected each of {list(model.joint_names)} once (or empty)")
        return np.array([model.joint_names.index(n) for n in names]), names

    @staticmethod
    def _vector(request, field, index, names, n, allow_empty=False):
        return request_vector(getattr(request, field), index, n, field, names, allow_empty)

    @staticmethod
    def _out(vector, index, what="effort"):
        """``vector`` (model order) in the request's order; a result that is not finite (huge but
        finite inputs can overflow) is refused, never answered with success."""
        if not np.isfinite(vector).all():
            raise MessageRejected("non-finite-output", f"{what}: result not finite for this request "
                                                       "(inputs too large?)")
        return (vector if index is None else vector[index]).tolist()

    def mass_matrix(self, request, response, dyn, index, names):
        n = dyn.model.n
        q = self._vector(request, "position", index, names, n)
        B = dyn.mass_matrix(q)
        if index is not None:
            B = B[np.ix_(index, index)]
        response.size = n
        response.mass_matrix = self._out(B.reshape(-1), None, "mass_matrix")

    def inverse_dynamics(self, request, response, dyn, index, names):
        n = dyn.model.n
        q = self._vector(request, "position", index, names, n)
        qd = self._vector(request, "velocity", index, names, n, allow_empty=True)
        qdd = self._vector(request, "acceleration", index, names, n, allow_empty=True)
        response.effort = self._out(dyn.rnea(q, qd, qdd), index)

    def gravity_torques(self, request, response, dyn, index, names):
        q = self._vector(request, "position", index, names, dyn.model.n)
        response.effort = self._out(dyn.gravity_torques(q), index)

    def forward_dynamics(self, request, response, dyn, index, names):
        n = dyn.model.n
        q = self._vector(request, "position", index, names, n)
        qd = self._vector(request, "velocity", index, names, n, allow_empty=True)
        tau = self._vector(request, "effort", index, names, n, allow_empty=True)
        qdd = dyn.forward_dynamics(q, qd, tau)
        response.acceleration = self._out(qdd, index, "acceleration")


main = main_for(DynamicsServiceNode)

if __name__ == "__main__":
    main()
