"""
The source texts' inverse-dynamics formulations side by side, one module each.

The references are those of doc/references.md (Milićević et al.: M; Turney et al. 1980: TML).

=========================  ==========================================  ===========  ======
module                     formulation                                 frames       joints
=========================  ==========================================  ===========  ======
``lagrange_euler``         Lagrange-Euler, 4x4 U_ij, U_ijk, J_i (M,    standard DH  R, P
                           eqs. 2.1-2.15)
``newton_euler_base``      Newton-Euler in base coordinates (M,        standard DH  R, P
                           Table 1)
``newton_euler_link``      N-E in link coordinates (M, Table 2 = LWP)  standard DH  R, P
``modified_newton_euler``  modified N-E (TML, Sect. 5)                 standard DH  R, P*
``dalembert``              generalized d'Alembert (M, Sect. 4)         standard DH  R only
``renaud``                 augmented-body N-E, steps (0)-(10)          modified DH  R, P
                           (Renaud 1987)
=========================  ==========================================  ===========  ======

(* prismatic joints are our extension of TML's revolute-only derivation.)  Each module has
``inverse_dynamics(model, q, qd, qdd, gravity=None, f_ext=None)`` for one configuration; it returns
the rigid-body torque, equal to ``rnea(model.rigid(), ...)`` (rotors and friction are ignored).
Models in the other DH convention are converted exactly (``_common.py``).  Each module's
``torques(view, inputs)`` is the recursion itself, written so that it also runs on counting
scalars (``count_operations``, with ``opcount``'s counting scalars).  These are reference
implementations for comparison and teaching; the package's fast, batched algorithm is
``robot_dynamics_ros.core.rnea``.
"""
from . import (dalembert, lagrange_euler, modified_newton_euler, newton_euler_base,
               newton_euler_link, renaud)
from ._common import count_operations
from .opcount import OpCount

FORMULATIONS = {
    "lagrange_euler": lagrange_euler,
    "newton_euler_base": newton_euler_base,
    "newton_euler_link": newton_euler_link,
    "modified_newton_euler": modified_newton_euler,
    "dalembert": dalembert,
    "renaud": renaud,
}

__all__ = ["FORMULATIONS", "OpCount", "count_operations", "dalembert", "lagrange_euler",
           "modified_newton_euler", "newton_euler_base", "newton_euler_link", "renaud"]
