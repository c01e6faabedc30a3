"""
The constraints of a re-timing as objects, composed in a list as toppra composes them.

toppra (Pham & Pham 2018) passes ``[JointVelocityConstraint(vlim),
JointTorqueConstraint(inv_dyn, ...), ...]`` to its algorithm, each a canonical linear
constraint a(s) sdd + b(s) sd^2 + c(s) in [lower, upper] along the path.  Here the
same list is given to :func:`time_optimal_scaling`:

* joint constraints, :class:`JointTorqueConstraint` (the model's dynamics with friction and
  rotors), :class:`JointVelocityConstraint`, :class:`JointAccelerationConstraint`,
  :class:`JointJerkConstraint`: per-joint limits, which the scaling keeps in its vectorised
  :class:`~robot_dynamics_ros.core.trajectories.limits.Limits` (one row block per kind);
* :class:`Payload` (mass, centre, inertia in the tool frame): changes the torque constraint, whose
  dynamics become those of the model carrying it (``RobotModel.with_payload``);
* path constraints (:class:`PathConstraint` subclasses, e.g. ``tool_speed.ToolSpeedConstraint``):
  any other canonical linear constraint; each is one class giving its coefficients at path points
  and its usage on the output, which the verification re-checks.

:func:`resolve` turns a list into the limits, the model whose torques are constrained and the path
constraints.  A kind given twice is an error naming it; a joint kind left out is not constrained
(torque and velocity get a bound so large that it never binds; acceleration and jerk none).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...errors import InputError, RobotDescriptionError
from ...yaml_loader import load_yaml_file
from ..limits import Limits
from ..uniform import dense_samples

UNBOUNDED_EFFORT = 1e300        # a torque "limit" that never binds (Limits need finite ones)
UNBOUNDED_VELOCITY = 1e150      # squared in the rows: still finite


@dataclass(frozen=True)
class JointTorqueConstraint:
    """
    lower <= tau(q, qd, qdd) <= upper for every joint (the model's dynamics, friction, rotors).

    ``limit``: one value or one per joint (N m or N), symmetric; None: the model's effort limits.
    ``margin``: the fraction of the limit that may be used, (0, 1].
    """

    limit: object = None
    margin: float = 1.0


@dataclass(frozen=True)
class JointVelocityConstraint:
    """abs(qd) <= limit (one value or one per joint; None: the model's) times ``margin``."""

    limit: object = None
    margin: float = 1.0


@dataclass(frozen=True)
class JointAccelerationConstraint:
    """abs(qdd) <= limit (one or one per joint; None: the model's ``limits.acceleration``)."""

    limit: object = None
    margin: float = 1.0


@dataclass(frozen=True)
class JointJerkConstraint:
    """abs(d qdd / dt) <= limit (one value or one per joint, rad/s^3 or m/s^3)."""

    limit: object


@dataclass(frozen=True)
class Payload:
    """
    A payload held by the tool: mass (kg), centre of mass and inertia about it, in the tool frame.

    It changes the torque constraint: the torques are those of the model carrying it.
    """

    mass: float
    com: tuple = (0.0, 0.0, 0.0)
    inertia: object = None

    @classmethod
    def from_yaml(cls, path) -> "Payload":
        """
        Read a payload file: ``mass``, ``com`` and ``inertia`` (ixx..iyz, or a 3x3 list).

        The same keys may sit under ``payload:`` (as ``robot-dynamics identify --payload`` writes
        them into a robot file).  InputError names the file and the field.
        """
        data = load_yaml_file(Path(path), "payload", InputError, 1 << 16)
        if isinstance(data, dict) and isinstance(data.get("payload"), dict):
            data = data["payload"]
        if not isinstance(data, dict) or "mass" not in data:
            raise InputError(f"{path}: expected a mapping with mass, com and inertia "
                             "(or one under 'payload:')")
        unknown = sorted(set(data) - {"mass", "com", "inertia"})
        if unknown:
            raise InputError(f"{path}: unknown payload field(s) {unknown}; expected mass, com, "
                             "inertia")
        try:
            com = tuple(data.get("com", (0.0, 0.0, 0.0)))
        except TypeError:
            raise InputError(f"{path}: payload com: expected 3 numbers, got "
                             f"{data.get('com')!r}") from None
        return cls(data["mass"], com, data.get("inertia"))

    def carried_by(self, model):
        """Return ``model`` carrying this payload (InputError naming the bad field)."""
        try:
            return model.with_payload(self.mass, self.com, self.inertia)
        except (InputError, RobotDescriptionError) as err:
            raise InputError(f"payload: {err}") from None


class PathConstraint(ABC):
    """
    A canonical linear constraint along the path: a sdd + b sd^2 + c in [lower, upper].

    A new constraint is one subclass: :meth:`coefficients` at path points (q, q', q'' (P, n))
    with its bounds scaled by ``fraction`` (P,) (the verification tightens a constraint where the
    output breaks it), :meth:`usage` on states of the output (the fraction of the limit used, > 1
    beyond), and :meth:`uniform_factor` (the smallest uniform slowing of a timed trajectory that
    keeps it).
    """

    name = "path"

    @abstractmethod
    def coefficients(self, model, q, dq, ddq, fraction):
        """Return (a, b, c, lower, upper), each (P, k), for k rows per point."""

    @abstractmethod
    def usage(self, model, q, qd, qdd) -> np.ndarray:
        """Return the fraction of the limit used at each state, (M, k)."""

    @abstractmethod
    def uniform_factor(self, model, q, qd, qdd) -> float:
        """Return the smallest c >= 1 such that q(t / c) keeps the constraint at these states."""

    def describe(self) -> str:
        return self.name


@dataclass(frozen=True, eq=False)
class PathLimits(Limits):
    """Joint limits with the path constraints (``path``) the scaling keeps besides them."""

    path: tuple = ()


def with_path(limits: Limits, path) -> Limits:
    """Return ``limits`` carrying the path constraints ``path`` (none: ``limits`` itself)."""
    if not path:
        return limits
    return PathLimits(limits.effort_lower, limits.effort_upper, limits.velocity,
                      limits.acceleration, limits.jerk, tuple(path))


@dataclass(frozen=True)
class Resolved:
    """A constraint list resolved: the joint limits, the torque's model, the path constraints."""

    limits: Limits
    torque_model: object
    path: tuple
    payload: Payload | None = None


JOINT_KINDS = (JointTorqueConstraint, JointVelocityConstraint, JointAccelerationConstraint,
               JointJerkConstraint, Payload)


def resolve(model, constraints) -> Resolved:
    """
    Resolve ``constraints`` (a list of the classes above, or a :class:`Limits`) for ``model``.

    A Limits is the torque, velocity, acceleration (and jerk) constraints it holds.  Joint limits
    are built by ``Limits.from_model`` with the constraints' overrides and margins, so a list of
    the three joint constraints gives exactly the limits of the same options.
    """
    if isinstance(constraints, Limits):
        return Resolved(constraints, model, ())
    if constraints is None:
        return Resolved(Limits.from_model(model), model, ())
    found, path = {}, []
    for item in constraints:
        if isinstance(item, PathConstraint):
            path.append(item)
        elif isinstance(item, JOINT_KINDS):
            if type(item) in found:
                raise InputError(f"constraints: {type(item).__name__} given twice")
            found[type(item)] = item
        else:
            raise InputError(f"constraints: {item!r} is not a constraint (expected one of "
                             f"{[k.__name__ for k in JOINT_KINDS]} or a PathConstraint)")
    torque = found.get(JointTorqueConstraint, JointTorqueConstraint(UNBOUNDED_EFFORT))
    velocity = found.get(JointVelocityConstraint, JointVelocityConstraint(UNBOUNDED_VELOCITY))
    acceleration = found.get(JointAccelerationConstraint)
    acc_limit = (np.inf if acceleration is None else acceleration.limit)
    limits = Limits.from_model(model, torque.margin, velocity.margin,
                               1.0 if acceleration is None else acceleration.margin,
                               acc_limit, velocity.limit, torque.limit)
    jerk = found.get(JointJerkConstraint)
    if jerk is not None:
        try:
            values = np.broadcast_to(np.asarray(jerk.limit, dtype=float), (model.n,))
        except (TypeError, ValueError):
            raise InputError(f"jerk: expected one value or {model.n} (one per joint), "
                             f"got {jerk.limit!r}") from None
        limits = Limits(limits.effort_lower, limits.effort_upper, limits.velocity,
                        limits.acceleration, values)
    payload = found.get(Payload)
    torque_model = model if payload is None else payload.carried_by(model)
    return Resolved(with_path(limits, path), torque_model, tuple(path), payload)


UNIFORM_PATH_SAMPLES = 4000  # samples of a trajectory where path constraints bound its uniform c
UNIFORM_MARGIN = 3.5e-4      # the samples bound the largest value from below: half the re-check's
#                              tolerance (0.07 %) kept in hand


def path_uniform_factor(model, traj, constraints) -> float:
    """
    Return the smallest uniform slowing c >= 1 of ``traj`` that keeps the path constraints.

    ``uniform_scaling(..., min_scale=c)`` then keeps them with the joint limits.
    """
    constraints = [c for c in constraints if isinstance(c, PathConstraint)]
    if not constraints:
        return 1.0
    _, q, qd, qdd = dense_samples(traj.reordered(model.joint_names), UNIFORM_PATH_SAMPLES)
    factor = max(c.uniform_factor(model, q, qd, qdd) for c in constraints)
    return factor * (1.0 + UNIFORM_MARGIN) if factor > 1.0 else 1.0
