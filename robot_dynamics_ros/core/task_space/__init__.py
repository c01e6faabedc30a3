"""
Task space: inverse kinematics and the task-space view of the dynamics.

Siciliano et al. 2009, Sects. 7.8-7.9 and Asada & Slotine 1986, ch. 2-4: orientation
representations and the analytic Jacobian, inverse kinematics (closed form for Asada & Slotine
1986's 5R-1P arm, numeric for any arm), redundancy resolution, the operational space model, the
dynamic manipulability ellipsoid, statics and stiffness, payload capacity.  The Jacobians
themselves are in
``algorithms/kinematics.py``.
"""
from .closed_form_ik_5r1p import ClosedFormSolutions, closed_form_ik_5r1p
from .inverse_kinematics import IKResult, inverse_kinematics
from .manipulability import ManipulabilityEllipsoid, dynamic_manipulability, projected_ellipse
from .operational_space import (null_space_projector, operational_space_model,
                                OperationalSpaceModel, task_force, task_space_torque)
from .orientation import (analytic_jacobian_transform, angles_from_matrix, angular_velocity_map,
                          rotation_matrix)
from .payload_capacity import PayloadCapacity, payload_capacity, trajectory_payload_capacity
from .redundancy import joint_velocities, kinematic_null_space_projector, weighted_pseudo_inverse
from .statics import (Compliance, end_point_compliance, joint_torques_for_wrench,
                      transform_wrench, wrench_transform)
from .task import analytic_jacobian, task_jacobian, TaskJacobian

__all__ = ["ClosedFormSolutions", "closed_form_ik_5r1p", "IKResult", "inverse_kinematics",
           "ManipulabilityEllipsoid", "dynamic_manipulability", "projected_ellipse",
           "OperationalSpaceModel", "operational_space_model", "null_space_projector",
           "task_force", "task_space_torque", "rotation_matrix", "angles_from_matrix",
           "angular_velocity_map", "analytic_jacobian_transform", "PayloadCapacity",
           "payload_capacity", "trajectory_payload_capacity", "joint_velocities",
           "weighted_pseudo_inverse", "kinematic_null_space_projector", "Compliance",
           "end_point_compliance", "joint_torques_for_wrench", "transform_wrench",
           "wrench_transform", "TaskJacobian", "task_jacobian", "analytic_jacobian"]
