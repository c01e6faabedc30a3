"""
Dynamics selection: which model the nodes compute with, on the core's one route.

:class:`Dynamics` is the facade the nodes call (all vectors in the model's joint order).  It is
built once per model by :func:`select_dynamics` from the kernel of
``core.algorithms.route.select`` (the one place where the implementation is chosen: the core's
compiled kernels, plain Python without numba) and replaced as a whole (never mutated) when the
payload changes, so a callback that reads ``node.dynamics`` once sees one consistent model.
``implementation`` ("compiled" or "plain") and ``fallback_reason`` (why not compiled) are the
kernel's.  (The generated model of ``robot-dynamics codegen`` is an export, no longer a route:
the parameter ``use_generated_model`` is accepted and ignored, with one warning.)

The per-message path of the torque nodes calls :meth:`Dynamics.holding_values` and
:meth:`Dynamics.rnea_values`: lists of n finite floats in (already checked by the message
conversion), a list out.  The array functions (``rnea``, ...) check their arguments as the core
does and serve the services.

:class:`Payload` is the ``payload.*`` parameters as one value (mass, CoM, inertia about the CoM in
the tool frame), validated as a whole by :meth:`Payload.applied_to` at every change.
"""
from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np

from .. import core
from ..core import RobotDescriptionError, RobotModel
from ..core.control import friction_torques, holding_torque, holding_torques
from ..core.model.urdf_xml import looks_like_xml
from ..core.model.xacro_file import parse_arguments
from ..core.algorithms.route import Kernel, select

INERTIA_KEYS = ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")


class Payload(NamedTuple):
    """A payload on the tool flange: mass [kg], CoM (3) [m], inertia (6) [kg m^2]; tool frame."""

    mass: float
    com: tuple
    inertia: tuple          # ixx iyy izz ixy ixz iyz about the payload's CoM

    @classmethod
    def of_model(cls, model: RobotModel | None) -> "Payload":
        """Read the payload of a robot file (none, or no model yet: zeros)."""
        p = model.payload if model is not None else None
        if not p:
            return cls(0.0, (0.0,) * 3, (0.0,) * 6)
        inertia = p.get("inertia") or {}
        return cls(float(p["mass"]), tuple(float(c) for c in p.get("com", (0.0,) * 3)),
                   tuple(float(inertia.get(k, 0.0)) for k in INERTIA_KEYS))

    def applied_to(self, base: RobotModel) -> RobotModel:
        """
        Put this payload on ``base`` (replacing the file's), checking the payload as a whole.

        Checked even when the mass is 0 (a non-physical inertia or CoM is refused whatever the
        mass, so a later mass change is never refused for a value set earlier: issue 10, N2).
        Raises RobotDescriptionError naming the parameter.
        """
        if len(self.com) != 3:
            raise RobotDescriptionError("payload.com: expected 3 values (x, y, z in the tool "
                                        f"frame), got {len(self.com)}")
        if len(self.inertia) != 6:
            raise RobotDescriptionError("payload.inertia: expected 6 values "
                                        f"({' '.join(INERTIA_KEYS)}), got {len(self.inertia)}")
        try:
            model = base.with_payload(self.mass, list(self.com),
                                      dict(zip(INERTIA_KEYS, self.inertia)))
        except (RobotDescriptionError, ValueError) as exc:
            raise RobotDescriptionError(f"payload: {exc}") from None
        return model


class Dynamics:
    """
    A robot model and the dynamics functions the nodes call, in the model's joint order.

    Every function takes one configuration (n,) (or a batch (N, n)) as in
    ``robot_dynamics_ros.core``.  Immutable: build a new one for another model.
    """

    __slots__ = ("model", "implementation", "fallback_reason", "rnea", "gravity_torques",
                 "nonlinear_effects", "mass_matrix", "forward_dynamics", "_rnea_raw",
                 "_gravity_raw", "_viscous", "_coulomb")

    def __init__(self, kernel: Kernel):
        model = kernel.model
        for name, value in (("model", model), ("implementation", kernel.implementation),
                            ("fallback_reason", kernel.reason), *_functions(kernel).items(),
                            ("_viscous", model.viscous.tolist()),
                            ("_coulomb", model.coulomb.tolist())):
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError(f"Dynamics is immutable ({name})")

    def friction_torques(self, qd, q=None):
        """Return the robot's joint friction at (q, qd) (``core.control.friction``; q: for F_l)."""
        return friction_torques(self.model, qd, q, lambda _, q: self.gravity_torques(q))

    def holding_torques(self, q, qd=None):
        """
        g(q), plus the friction at ``qd`` when it is given (``core.control.holding_torques``).

        What gravity compensation commands: the torques that hold the robot against gravity and,
        with friction compensation, that cancel the joint friction of the current motion.
        """
        return holding_torques(self.gravity_torques, self.model, q, qd)

    def holding_values(self, q: list, qd: list | None = None) -> list:
        """:meth:`holding_torques` for lists of n finite floats: a list, the per-message path."""
        if qd is not None and self.model.coupled_drives:    # (drives' friction through K^T)
            return self.holding_torques(np.array(q), np.array(qd)).tolist()
        tau = self._gravity_raw(q).tolist()
        if qd is None:
            return tau
        if self.model.has_extra_friction:       # (F_l's load is g(q) itself: tau here)
            return list(map(holding_torque, tau, qd, self._viscous, self._coulomb,
                            self.model.viscous_quadratic.tolist(),
                            self.model.coulomb_load.tolist()))
        return list(map(holding_torque, tau, qd, self._viscous, self._coulomb))

    def rnea_values(self, q: list, qd: list, qdd: list) -> list:
        """``rnea`` for lists of n finite floats: a list, the per-message path."""
        return self._rnea_raw(q, qd, qdd).tolist()


def _functions(kernel: Kernel) -> dict:
    return {"rnea": kernel.rnea, "gravity_torques": kernel.gravity_torques,
            "nonlinear_effects": kernel.nonlinear_effects, "mass_matrix": kernel.mass_matrix,
            "forward_dynamics": kernel.forward_dynamics,
            "_rnea_raw": lambda q, qd, qdd: kernel.rnea(np.array(q), np.array(qd),
                                                        np.array(qdd)),
            "_gravity_raw": lambda q: kernel.gravity_torques(np.array(q))}


def select_dynamics(model: RobotModel) -> Dynamics:
    """
    Return the nodes' :class:`Dynamics` of ``model`` on the core's route (``route.select``).

    The compiled kernels, loaded now (in ``on_configure``), not after a first plain stretch.
    """
    return Dynamics(select(model, "compiled"))


class ModelOptions(NamedTuple):
    """How the nodes' ``robot_description`` becomes a model (their read-only parameters)."""

    root_link: str = ""
    tip_link: str = ""
    strict_inertia: bool = False
    xacro_arguments: tuple = ()         # "name:=value" strings


def load_robot(description: str, options: ModelOptions = ModelOptions()
               ) -> tuple[RobotModel, list[str]]:
    """
    Load the ``robot_description`` parameter; return the model and the accepted quirks.

    A shipped robot name (config/robots), a YAML path, a URDF or xacro path, or URDF XML text
    (as robot_state_publisher's parameter carries it); the warnings (an inconsistent inertia,
    almost parallel axes) are returned for the node's log.
    """
    if not description:
        raise RobotDescriptionError("robot_description: empty; give a shipped robot name "
                                    f"{core.shipped_robots()}, a YAML, URDF or xacro path or "
                                    "URDF text")
    arguments = parse_arguments(options.xacro_arguments, "xacro_arguments:")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = RobotModel.from_description(description, options.root_link, options.tip_link,
                                            options.strict_inertia, arguments)
    return model, [str(w.message) for w in caught]


def model_from_topic(text: str, options: ModelOptions = ModelOptions()
                     ) -> tuple[RobotModel, list[str]]:
    """
    Load a robot from a ``/robot_description`` message: URDF XML text (robot_state_publisher's).

    Raises RobotDescriptionError saying what is wrong, as for a URDF file.  Xacro is never
    expanded here (it would run code from the graph); ``xacro_arguments`` do not apply.
    """
    if not looks_like_xml(text):
        raise RobotDescriptionError("not URDF XML text (robot_state_publisher publishes the URDF "
                                    f"itself), got {text[:60]!r}")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = RobotModel.from_urdf(text, options.root_link or None, options.tip_link or None,
                                     strict_inertia=options.strict_inertia, expand_xacro=False)
    return model, [str(w.message) for w in caught]
