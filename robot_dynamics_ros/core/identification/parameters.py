"""
The dynamic parameters of a model: layout, names, values, and a model built from values.

The parameter vector pi (Siciliano et al. 2009, eq. 7.77, with friction as after eq. 7.80) holds
per joint i, base to tip, one block:

* the 10 inertial parameters of link i (the link moved by joint i, with whatever it carries, the
  payload folded into the last link): mass ``m``, first moments ``mx, my, mz`` (= m c) and the
  inertia tensor about the frame origin ``Ixx, Ixy, Ixz, Iyy, Iyz, Izz`` (7.71-7.73);
* ``Im``, the rotor inertia of joint i's motor (motor side, as ``motor.rotor_inertia`` in the robot
  file; the book's I_mi, eqs. 7.66-7.67, grouped with link i as in 7.77), if joint i has a motor (a
  rotor inertia or a gear ratio other than 1 in the model);
* ``Fv``, ``Fc``, viscous and Coulomb friction of joint i (joint side, Siciliano et al.,
  Robotics: Modelling, Planning and Control, eq. 7.114: F_v qd + F_s sgn(qd)), ``Fo``, the
  joint's torque offset (what its effort sensor or drive reports at zero torque: a sensor bias,
  an amplifier offset), ``Fv2`` and ``Fl``, the quadratic viscous and the load-dependent Coulomb
  friction F_v2 qd|qd| + F_l |g_j(q)| sgn(qd) (``core/control/friction.py``), each for every
  joint when the ``friction`` kinds say so.  By default (``friction=None``) they are the model's
  own: ``Fv``, ``Fc`` if it has friction, ``Fo`` if it has an offset, ``Fv2``, ``Fl`` if it has
  them, so that ``Y pi`` is what the model says a sensor measures, ``rnea`` plus the offset
  (:func:`predicted_effort`).  ``Fl``'s column ``|g_j(q)| sgn(qd_j)`` takes g from a model's
  rigid bodies (the model's own unless another is given: identification iterates it,
  ``pipeline.py``), so it is the one column that depends on parameters.  Identification passes
  the kinds it fits (:data:`FRICTION_KINDS`, any subset).

Names are ``<kind>[<joint name>]``, e.g. ``mx[elbow]``, ``Izz[shoulder]``, ``Im[wrist]``.

**Frames.**  The link quantities of ``[j]`` are in *joint frame j*, the model's internal frame
(``model.chain``, modified DH): its origin is on the axis of joint j, its z axis is that axis, and
it moves with link j.  For a ``modified`` robot file it *is* the file's link frame j.  For a
``standard`` file it is the file's link frame j moved back along its own x axis by ``a_j`` onto
joint axis j and turned about x by ``-alpha_j`` (so that z is the joint axis):
file frame j = joint frame j * Tx(a_j) Rx(alpha_j).  For a URDF the link's own frame is placed
in it by the joint's ``link_frame``.  ``model.chain.link_offset[j]`` is that transform in every
case.  These are the frames in which the base parameters take their classic regrouped form
(Khalil's rules: what lies on a revolute joint's axis moves with the previous link).  Inertia
entries are the tensor's matrix entries as in the robot file and URDF (``Ixy`` = matrix entry =
minus the book's product of inertia, eq. 7.11).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..algorithms import gravity_torques, rnea
from ..control.friction import viscous_quadratic_floor
from ..errors import InputError
from ..model import RobotModel
from ..model.cache import model_constant
from ..model.inertia import check_physical_inertia, inertia_entries

LINK_KINDS = ("m", "mx", "my", "mz", "Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz")
# joint friction and offset terms: robot-file key, column name prefix
FRICTION_KINDS = ("viscous", "coulomb", "offset", "viscous_quadratic", "coulomb_load",
                  "joint_viscous", "joint_coulomb")
FRICTION_PREFIX = {"viscous": "Fv", "coulomb": "Fc", "offset": "Fo",
                   "viscous_quadratic": "Fv2", "coulomb_load": "Fl",
                   "joint_viscous": "Fvj", "joint_coulomb": "Fcj"}
# joint-side friction of a joint whose drive is coupled (core/model/coupling.py): on qd_j, on
# joint j alone; its columns are 0 on the other joints, and a model without a coupling has none
JOINT_SIDE_KINDS = ("joint_viscous", "joint_coulomb")
# the kinds that must not be negative (an offset may have either sign), and F_l's upper bound
# (F_v2 has its own floor: quadratic_floor)
NONNEGATIVE_KINDS = ("viscous", "coulomb", "coulomb_load", "joint_viscous", "joint_coulomb")
# the kinds that act on a drive's velocity, mapped to the joints through K^T where drives are
# coupled (core/model/coupling.py); an offset is the effort channel's own
DRIVE_KINDS = ("viscous", "coulomb", "viscous_quadratic", "coulomb_load")
EXTRA_KINDS = ("viscous_quadratic", "coulomb_load")
UNCOUPLED_KINDS = ("coulomb_load",)     # not on a coupled drive (F_l's load is a joint's)
COULOMB_LOAD_MAX = 1.0
# (row, column) of the tensor entry of each inertia parameter
TENSOR_ENTRIES = ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))


class ParameterLayout(NamedTuple):
    """Where each parameter sits in pi (column indices of the regressor)."""

    names: tuple[str, ...]
    link: np.ndarray        # (n, 10) column of each link parameter
    rotor: np.ndarray       # (n,) column of Im, -1 where the joint has no motor
    viscous: np.ndarray     # (n,) column of Fv, -1 without it
    coulomb: np.ndarray     # (n,) column of Fc, -1 without it
    offset: np.ndarray      # (n,) column of Fo, -1 without it
    block_start: np.ndarray  # (n,) first column of joint i's block
    friction: tuple = ()    # the friction kinds present, in FRICTION_KINDS order
    viscous_quadratic: np.ndarray | None = None     # (n,) column of Fv2, -1 without it
    coulomb_load: np.ndarray | None = None          # (n,) column of Fl, -1 without it
    joint_viscous: np.ndarray | None = None         # (n,) column of Fvj, -1 without it
    joint_coulomb: np.ndarray | None = None         # (n,) column of Fcj, -1 without it

    @property
    def size(self) -> int:
        return len(self.names)


def joint_has_motor(model, i: int) -> bool:
    """Joint i has a motor model: a rotor inertia or a gear ratio other than 1."""
    return bool(model.rotor_inertia[i] != 0.0 or model.gear_ratio[i] != 1.0)


def model_friction(model) -> tuple[str, ...]:
    """Return the friction kinds the model has (nonzero somewhere): the layout's default."""
    kinds = ("viscous", "coulomb") if model.has_friction else ()
    kinds += ("offset",) if model.has_torque_offset else ()
    return kinds + tuple(kind for kind, values in (("viscous_quadratic", model.viscous_quadratic),
                                                   ("coulomb_load", model.coulomb_load),
                                                   ("joint_viscous", model.joint_viscous),
                                                   ("joint_coulomb", model.joint_coulomb))
                         if np.any(values != 0.0))


def friction_kinds(model, friction=None) -> tuple[str, ...]:
    """
    Return ``friction`` checked and in canonical order (None: :func:`model_friction`).

    The joint-side kinds are left out for a model without coupled drives (no joint has them).
    """
    if friction is None:
        return model_friction(model)
    unknown = sorted(set(friction) - set(FRICTION_KINDS))
    if unknown or isinstance(friction, str):
        raise InputError(f"friction: expected a subset of {list(FRICTION_KINDS)}, "
                         f"got {friction!r}")
    return tuple(k for k in FRICTION_KINDS if k in friction
                 and (model.coupled_drives or k not in JOINT_SIDE_KINDS))


def _build_layout(model, friction: tuple[str, ...]) -> ParameterLayout:
    names, n = [], model.n
    link = np.zeros((n, 10), dtype=int)
    rotor, start = np.full(n, -1), np.full(n, -1)
    columns = {kind: np.full(n, -1) for kind in FRICTION_KINDS}
    for i, joint in enumerate(model.joint_names):
        start[i] = len(names)
        link[i] = np.arange(len(names), len(names) + 10)
        names += [f"{kind}[{joint}]" for kind in LINK_KINDS]
        if joint_has_motor(model, i):
            rotor[i] = len(names)
            names.append(f"Im[{joint}]")
        for kind in friction:
            columns[kind][i] = len(names)
            names.append(f"{FRICTION_PREFIX[kind]}[{joint}]")
    for a in (link, rotor, start, *columns.values()):
        a.setflags(write=False)
    return ParameterLayout(tuple(names), link, rotor, columns["viscous"], columns["coulomb"],
                           columns["offset"], start, friction, columns["viscous_quadratic"],
                           columns["coulomb_load"], columns["joint_viscous"],
                           columns["joint_coulomb"])


def parameter_layout(model, friction=None) -> ParameterLayout:
    """
    Return the model's parameter layout (computed once per model and friction kinds).

    ``friction``: the friction kinds with columns (module docstring); None: the model's own.
    """
    kinds = friction_kinds(model, friction)
    return model_constant(model, ("identification.layout", kinds),
                          lambda m: _build_layout(m, kinds))


def parameter_names(model, friction=None) -> tuple[str, ...]:
    """Return names of the columns of ``regressor(model, ...)`` (see the module docstring)."""
    return parameter_layout(model, friction).names


def link_parameters(mass: float, com, inertia) -> np.ndarray:
    """
    Return a body's 10 parameters about the frame origin.

    [m, mx, my, mz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz] of a body (CoM and inertia about the CoM in
    one frame) about that frame's origin: Steiner's theorem, Siciliano et al. 2009, eqs. 7.71-7.73.
    """
    c = np.asarray(com, dtype=float)
    I_origin = np.asarray(inertia, dtype=float) + mass * (c @ c * np.eye(3) - np.outer(c, c))
    return np.concatenate([[mass], mass * c, [I_origin[r, k] for r, k in TENSOR_ENTRIES]])


def origin_inertia(theta: np.ndarray) -> np.ndarray:
    """Return the 3x3 tensor about the frame origin from a link's 10 parameters."""
    tensor = np.empty((3, 3))
    for value, (r, k) in zip(theta[4:10], TENSOR_ENTRIES):
        tensor[r, k] = tensor[k, r] = value
    return tensor


def friction_values(model) -> dict[str, np.ndarray]:
    """Return the model's per-joint friction coefficients and offsets by kind."""
    return {"viscous": model.viscous, "coulomb": model.coulomb, "offset": model.torque_offset,
            "viscous_quadratic": model.viscous_quadratic, "coulomb_load": model.coulomb_load,
            "joint_viscous": model.joint_viscous, "joint_coulomb": model.joint_coulomb}


def parameter_vector(model, friction=None) -> np.ndarray:
    """Return the model's own pi, in the order of :func:`parameter_names` (a new array)."""
    layout, ch = parameter_layout(model, friction), model.chain
    pi = np.zeros(layout.size)
    values = friction_values(model)
    for i in range(model.n):
        pi[layout.link[i]] = link_parameters(ch.mass[i], ch.com[i], ch.inertia[i])
        if layout.rotor[i] >= 0:
            pi[layout.rotor[i]] = ch.rotor_inertia[i]
    for kind in layout.friction:
        pi[friction_columns(layout, kind)] = values[kind]
    return pi


def friction_columns(layout: ParameterLayout, kind: str) -> np.ndarray:
    """Return the columns of one friction kind (one per joint; the layout must have the kind)."""
    return getattr(layout, kind)


def predicted_effort(model, q, qd, qdd) -> np.ndarray:
    """
    Return what the model says the joints' effort sensors read: ``rnea`` plus the torque offset.

    The offset is no torque on the robot (no dynamics uses it) but is part of every measured
    effort, so predictions compared with measurements include it.
    """
    return rnea(model, q, qd, qdd) + model.torque_offset


def friction_terms(model, q, qd, kinds, load=None) -> dict:
    """
    Return each friction kind's regressor column per joint (what multiplies its coefficient).

    qd, sgn(qd), 1, qd|qd| and |g(q)| sgn(qd) (``core.control.friction``); ``load``: g(q) to use
    for the last (default: the model's own gravity torques), computed only if asked for.  With
    coupled drives (``core/model/coupling.py``) the terms are the drives': the velocity is each
    drive's, v = K qd, and column i is drive i's (the regressor and :func:`known_friction` map
    it to the joints through K^T, ``DRIVE_KINDS``); F_l of a coupled drive is not modelled
    (its term is 0: a robot file refuses it there).  The joint-side kinds are qd_j and sgn(qd_j)
    on the coupled drives' joints, 0 elsewhere.
    """
    qd = np.asarray(qd, dtype=float)
    terms = {}
    for kind in JOINT_SIDE_KINDS:
        if kind in kinds:
            terms[kind] = np.zeros_like(qd)
            coupled = list(model.coupled_drives)
            own = qd[..., coupled]
            terms[kind][..., coupled] = own if kind == "joint_viscous" else np.sign(own)
    kinds = [kind for kind in kinds if kind not in JOINT_SIDE_KINDS]
    if model.coupled_drives:
        qd = qd @ model.coupling.T
    for kind in kinds:
        if kind == "viscous":
            terms[kind] = qd
        elif kind == "coulomb":
            terms[kind] = np.sign(qd)
        elif kind == "offset":
            terms[kind] = np.ones_like(qd)
        elif kind == "viscous_quadratic":
            terms[kind] = qd * np.abs(qd)
        else:
            if load is None:
                load = gravity_torques(model, q)
            terms[kind] = np.abs(load) * np.sign(qd)
    for kind in UNCOUPLED_KINDS:
        if kind in terms and model.coupled_drives:     # (not modelled on a coupled drive)
            terms[kind] = terms[kind].copy()
            terms[kind][..., list(model.coupled_drives)] = 0.0
    return terms


def drive_to_joints(model, kind: str, torque: np.ndarray) -> np.ndarray:
    """Return a friction kind's drive torques (..., n) as joint torques: K^T for DRIVE_KINDS."""
    if model.coupled_drives and kind in DRIVE_KINDS:
        return torque @ model.coupling
    return torque


def known_friction(model, qd, fitted, q=None) -> np.ndarray:
    """
    Return the friction and offset torques of the kinds *not* in ``fitted``, from the model.

    Identification fits some kinds; the others are known (the robot file's values) and are
    taken off the measured efforts first, so the fitted model keeps them.  ``q`` is needed only
    where the model has load-dependent friction (F_l) that is not fitted.
    """
    qd = np.asarray(qd, dtype=float)
    values = friction_values(model)
    known = [kind for kind in FRICTION_KINDS if kind not in fitted and np.any(values[kind])]
    if "coulomb_load" in known and q is None:
        raise InputError(f"{model.name}: its load-dependent friction (friction.coulomb_load) "
                         "needs the joint positions, and none were given")
    total = np.zeros_like(qd)
    for kind, term in friction_terms(model, q, qd, known).items():
        total = total + drive_to_joints(model, kind, values[kind] * term)
    return total


def _check_vector(model, pi, friction=None) -> np.ndarray:
    pi = np.asarray(pi, dtype=float)
    size = parameter_layout(model, friction).size
    if pi.shape != (size,):
        raise InputError(
            f"parameter vector: expected shape ({size},) for robot '{model.name}', got {pi.shape}")
    if not np.isfinite(pi).all():
        raise InputError(
            "parameter vector: non-finite value for "
            f"{parameter_names(model, friction)[np.argmin(np.isfinite(pi))]}")
    return pi


def consistency_problems(model, pi, tolerance: float = 1e-9, friction=None) -> list[str]:
    """
    Return why a parameter vector is not physically consistent.

    Why the parameter vector is not physically consistent, one message per problem (empty if it
    is).

    A link is a real body when its mass is positive (or zero with no first moment) and its inertia
    about the centre of mass is positive semi-definite with principal moments obeying the triangle
    inequality (``model.inertia.check_physical_inertia``); equivalently its pseudo-inertia
    [[tr(I)/2 E - I, h], [h^T, m]] is positive semi-definite (Wensing et al. 2017).  Rotor inertias
    and friction coefficients must not be negative (offsets may have either sign).
    """
    pi = _check_vector(model, pi, friction)
    layout, problems = parameter_layout(model, friction), []
    for i, joint in enumerate(model.joint_names):
        theta = pi[layout.link[i]]
        m, h = theta[0], theta[1:4]
        scale = max(abs(m), 1e-300)
        if m < -tolerance * max(1.0, np.abs(theta).max()):
            problems.append(f"link of joint '{joint}': negative mass {m:.6g} kg")
            continue
        if m <= 0.0:
            if np.abs(h).max() > tolerance * max(1.0, np.abs(theta).max()):
                problems.append(f"link of joint '{joint}': first moment {h.tolist()} without mass")
                continue
            c = np.zeros(3)
        else:
            c = h / scale
        I_com = origin_inertia(theta) - m * (c @ c * np.eye(3) - np.outer(c, c))
        why = check_physical_inertia(I_com)
        if why is not None:
            problems.append(f"link of joint '{joint}': inertia about the centre of mass {why}")
    labels = {"viscous": "viscous friction", "coulomb": "Coulomb friction",
              "viscous_quadratic": "quadratic viscous friction",
              "coulomb_load": "load-dependent Coulomb friction",
              "joint_viscous": "joint-side viscous friction",
              "joint_coulomb": "joint-side Coulomb friction"}
    columns = [("rotor inertia", layout.rotor)] + [
        (labels[kind], friction_columns(layout, kind)) for kind in NONNEGATIVE_KINDS
        if kind in layout.friction]
    for kind, cols in columns:
        for i, col in enumerate(cols):
            if col >= 0 and pi[col] < 0.0:
                problems.append(f"joint '{model.joint_names[i]}': negative {kind} {pi[col]:.6g}")
    if "viscous_quadratic" in layout.friction:
        floor = quadratic_floor(model, layout, pi)
        for i, col in enumerate(layout.viscous_quadratic):
            if pi[col] < floor[i]:
                problems.append(f"joint '{model.joint_names[i]}': quadratic viscous friction "
                                f"{pi[col]:.6g} below {floor[i]:.6g} (-F_v / (2 x the velocity "
                                "limit): friction that falls with speed)")
    if "coulomb_load" in layout.friction:
        for i, col in enumerate(layout.coulomb_load):
            if pi[col] >= COULOMB_LOAD_MAX:
                problems.append(f"joint '{model.joint_names[i]}': load-dependent Coulomb "
                                f"friction {pi[col]:.6g}, not below {COULOMB_LOAD_MAX:g}")
    return problems


def quadratic_floor(model, layout, pi) -> np.ndarray:
    """Return each joint's least F_v2 (``control.friction.viscous_quadratic_floor``) for pi."""
    viscous = pi[layout.viscous] if "viscous" in layout.friction else model.viscous
    return viscous_quadratic_floor(np.maximum(viscous, 0.0), model.velocity_limit)


def model_with_parameters(model, pi, name: str | None = None, friction=None) -> RobotModel:
    """
    Return a copy of the model with other dynamic parameters.

    A copy of ``model`` (kinematics, limits, names kept) whose dynamic parameters are ``pi``.

    Each link's mass, CoM and inertia about the CoM are recovered from its 10 parameters and
    written in the file's own link frames; rotor inertia and friction where pi has them.  The
    payload of ``model``, folded into the last link's parameters, becomes part of that link (the
    copy has no ``payload`` entry).  A link whose mass is zero keeps its CoM at the origin.  Raises
    the model's :class:`RobotDescriptionError` if pi is not physically consistent (see
    :func:`consistency_problems`).
    """
    pi = _check_vector(model, pi, friction)
    layout, ch = parameter_layout(model, friction), model.chain
    spec = model.to_dict()
    for i, joint in enumerate(spec["joints"]):
        theta = pi[layout.link[i]]
        m = float(theta[0])
        mass_scale = max(1e-12, 1e-9 * float(np.abs(pi[layout.link[:, 0]]).max()))
        c = theta[1:4] / m if m > mass_scale else np.zeros(3)
        if m <= mass_scale:
            m = max(m, 0.0) if m > -mass_scale else m      # rounding of a massless link -> 0
        I_com = origin_inertia(theta) - max(m, 0.0) * (c @ c * np.eye(3) - np.outer(c, c))
        # internal frame i -> the file's link frame i: p_int = R p_file + t  (model._build_chain)
        R, t = ch.link_offset[i][:3, :3], ch.link_offset[i][:3, 3]
        com_file = R.T @ (c - t) if m > mass_scale else np.zeros(3)
        I_file = R.T @ I_com @ R
        joint["link"] = {"mass": m, "com": [float(x) for x in com_file],
                         "inertia": inertia_entries(0.5 * (I_file + I_file.T))}
        if layout.rotor[i] >= 0:
            joint["motor"] = {"rotor_inertia": float(pi[layout.rotor[i]]),
                              "gear_ratio": float(model.gear_ratio[i])}
        for kind in layout.friction:
            joint["friction"][kind] = float(pi[friction_columns(layout, kind)[i]])
            if kind in UNCOUPLED_KINDS and i in model.coupled_drives or \
                    kind in JOINT_SIDE_KINDS and i not in model.coupled_drives:
                del joint["friction"][kind]     # (not modelled there: friction_terms)
    spec["payload"] = None
    if name is not None:
        spec["name"] = name
    return RobotModel.from_dict(spec, f"{spec['name']} (identified parameters)",
                                strict_inertia=True)
