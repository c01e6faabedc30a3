"""
The robot model: a constant, validated description built once from YAML.

Algorithms are plain functions of ``(model, q, ...)`` and never change a model (its arrays are
read-only).  Two sets of data are kept:

* the user's view, exactly as in the file: DH parameters in the file's convention and link
  inertial parameters in the file's link frames (``mass``, ``com``, ``inertia``, limits, ...);
* a single internal chain used by every algorithm (``model.chain``), in *modified* DH form, where
  internal frame i sits on joint axis i and the joint turns about (or slides along) its local z.

A standard-DH chain (frame i at the distal end of link i, joint i about z_{i-1}; Siciliano et al.
2009, Sect. 2.8) becomes a modified one by shifting (a, alpha) down one row: internal frame i =
standard frame i-1 Rz(theta_i) Tz(d_i), and standard frame i = internal frame i Tx(a_i)
Rx(alpha_i).  Link inertias are re-expressed in the internal frames once, here, so the recursions
need one form only.

Each joint's translation is general: p_{i-1,i}(i-1) = Rx(alpha_{i-1}) (a_{i-1}, e_i, d_i), which
is the modified-DH (a, -d sin alpha, d cos alpha) when e_i = 0 (every DH file) and Pinocchio's
joint placement (jointPlacements) restricted to the DH rotation otherwise: a URDF's almost
parallel axes need e_i (``axes_to_dh.py``), in the spirit of the extra offset of Khalil and
Kleinfinger ("A new geometric notation for open and closed-loop robots", IEEE ICRA 1986).  The
algorithms read ``p_prev`` (computed once, here), never a and d.
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import InputError, RobotDescriptionError
from ..transforms import homogeneous, placement, pose_matrix, rot_x
from .inertia import Body, inertia_entries, inertia_matrix
from .coupling import coupling_matrix, friction_change, quadratic_change
from .payload import fold_payload
from .robot_file import load_robot_file, parse_robot

_HERE = Path(__file__).resolve()
# config/robots in a source checkout (or editable install), else where setup.py's data_files put it
# (<prefix>/share/robot_dynamics_ros/config/robots for pip into a venv and for colcon alike).
ROBOT_DIRS = (_HERE.parents[3] / "config" / "robots",) + tuple(
    prefix / "share" / "robot_dynamics_ros" / "config" / "robots" for prefix in _HERE.parents[6:7])


def _frozen(a, dtype=float) -> np.ndarray:
    a = np.array(a, dtype=dtype)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Chain:
    """
    Internal modified-DH chain (see module docstring): arrays of length n (n x 3, n x 3 x 3).

    T_{i-1,i}(q) = Rx(alpha_prev) Trans(a_prev, e_prev, d0 + q [prismatic]) Rz(theta0 + q
    [revolute]): rotation Rx(alpha_prev) Rz(theta), translation p_prev + q (0, -sin alpha_prev,
    cos alpha_prev) [prismatic] in frame i-1.
    """

    alpha_prev: np.ndarray
    a_prev: np.ndarray
    theta0: np.ndarray
    d0: np.ndarray
    e_prev: np.ndarray             # offset along y of Rx(alpha_prev); 0 for a plain DH row
    p_prev: np.ndarray             # n x 3: p_{i-1,i}(i-1) at q = 0, Rx(alpha_prev)(a, e, d0)
    prismatic: np.ndarray          # bool
    mass: np.ndarray               # link mass (payload folded into the last link)
    com: np.ndarray                # centre of mass in internal frame i
    inertia: np.ndarray            # rotational inertia about the CoM, internal frame i axes
    rotor_inertia: np.ndarray      # I_m, axial, motor side (Siciliano et al. 2009, eqs. 7.22-7.30)
    gear_ratio: np.ndarray         # k_r: motor velocity = k_r * joint velocity
    viscous: np.ndarray            # F_v, joint side
    coulomb: np.ndarray            # F_s, joint side
    link_offset: np.ndarray        # n x 4 x 4: internal frame i -> the file's link frame i
    flange: np.ndarray             # 4 x 4: internal frame n -> tool frame
    base: np.ndarray               # 4 x 4: world -> robot base (frame 0)
    gravity_base: np.ndarray       # gravity vector expressed in the base frame


class RobotModel:
    """A validated robot. Build with :meth:`from_yaml`, :meth:`from_dict` or :meth:`named`."""

    def __init__(self, spec: dict):
        # ``spec`` must come from parse_robot (validated and normalised); use the constructors.
        self._spec = spec
        joints = spec["joints"]
        self.name: str = spec["name"]
        self.convention: str = spec["dh_convention"]
        self.n: int = len(joints)
        self.joint_names: tuple[str, ...] = tuple(j["name"] for j in joints)
        self.joint_types: tuple[str, ...] = tuple(j["type"] for j in joints)
        self.gravity = _frozen(spec["gravity"])
        self.base = _frozen(pose_matrix(spec["base"]))
        self.tool = _frozen(pose_matrix(spec["tool"]))

        def col(group, key, absent=None):
            return _frozen([absent if j[group].get(key) is None else j[group][key]
                            for j in joints])
        self.dh_a, self.dh_alpha = col("dh", "a"), col("dh", "alpha")
        self.dh_d, self.dh_theta = col("dh", "d"), col("dh", "theta")
        self.dh_e = col("dh", "e", 0.0)      # modified DH only (robot_file.parse_robot)
        # A continuous joint has no position limits: -inf and +inf, so every limit check passes.
        # An unknown limit (null; a URDF's "not specified") is unbounded too, and is listed in
        # ``unknown_limits`` so that what needs it refuses (``require_limits``).
        self.lower = col("limits", "lower", -math.inf)
        self.upper = col("limits", "upper", math.inf)
        self.velocity_limit = col("limits", "velocity", math.inf)
        self.effort_limit = col("limits", "effort", math.inf)
        self.acceleration_limit = col("limits", "acceleration", math.inf)    # optional: inf = none
        self.unknown_limits: dict[str, tuple[str, ...]] = {}
        for j in joints:
            unknown = tuple(kind for kind, key in (("position", "lower"), ("velocity", "velocity"),
                                                   ("effort", "effort"))
                            if key in j["limits"] and j["limits"][key] is None)
            if unknown:
                self.unknown_limits[j["name"]] = unknown
        self.rotor_inertia = col("motor", "rotor_inertia")
        self.gear_ratio = col("motor", "gear_ratio")
        self.viscous, self.coulomb = col("friction", "viscous"), col("friction", "coulomb")
        # F_v2 (qd|qd|) and F_l (|g(q)| sgn(qd)): applied outside the Newton-Euler recursion by
        # core/control/friction.py's extra_friction, only when a joint has them
        self.viscous_quadratic = col("friction", "viscous_quadratic", 0.0)
        self.coulomb_load = col("friction", "coulomb_load", 0.0)
        # joint-side F_v, F_s of a joint whose drive is coupled: on qd_j, not on the drive's
        # K_j qd (model/coupling.py); 0 elsewhere (a robot file refuses them there)
        self.joint_viscous = col("friction", "joint_viscous", 0.0)
        self.joint_coulomb = col("friction", "joint_coulomb", 0.0)
        # what the joint's effort sensor or drive reports at zero torque (sensor bias, amplifier
        # offset): part of measured efforts, not a torque on the robot, so no dynamics uses it
        self.torque_offset = col("friction", "offset", 0.0)
        self.payload: dict | None = copy.deepcopy(spec["payload"])
        # K of the drive coupling, motor positions q_m = diag(gear_ratio) K q (identity: none);
        # ``coupled_drives``: the drives whose row of K is not the unit row (model/coupling.py)
        self.coupling = _frozen(coupling_matrix(self.joint_names, spec.get("coupling")))
        self.coupled_drives: tuple[int, ...] = tuple(
            i for i, row in enumerate(self.coupling) if np.any(row != np.eye(self.n)[i]))

        mass = np.array([j["link"]["mass"] for j in joints])
        com = np.array([j["link"]["com"] for j in joints])
        inertia = np.array([inertia_matrix(j["link"]["inertia"]) for j in joints])
        if self.payload is not None:
            mass[-1], com[-1], inertia[-1] = fold_payload(
                Body(mass[-1], com[-1], inertia[-1]), self.payload, self.tool)
        self.mass, self.com, self.inertia = _frozen(mass), _frozen(com), _frozen(inertia)
        self.chain = self._build_chain()

    # -- constructors -------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: dict, source: str = "<dict>",
                  strict_inertia: bool = False) -> "RobotModel":
        return cls(parse_robot(copy.deepcopy(data), source, strict_inertia))

    @classmethod
    def from_yaml(cls, path: str | Path, strict_inertia: bool = False) -> "RobotModel":
        return cls(load_robot_file(path, strict_inertia))

    @classmethod
    def from_urdf(cls, source, root_link: str | None = None, tip_link: str | None = None,
                  locked: dict | None = None, gravity=None,
                  accept_inconsistent_inertia: bool = True, **options) -> "RobotModel":
        """
        Build the chain of a URDF or xacro (path or XML text) from ``root_link`` to ``tip_link``.

        Defaults: the URDF's root link, and the child of the last movable joint when the movable
        joints form one chain.  Fixed subtrees are merged, off-chain movable joints locked at 0
        or ``locked[name]``; ``options``: ``strict_inertia``, ``xacro_arguments``,
        ``expand_xacro`` (``urdf.UrdfOptions``); see ``core/model/urdf.py`` and doc/urdf.md.
        ``accept_inconsistent_inertia=False`` is ``strict_inertia=True``.
        """
        from .urdf import UrdfOptions, load_urdf
        strict = options.pop("strict_inertia", False) or not accept_inconsistent_inertia
        return cls(load_urdf(source, UrdfOptions(root_link, tip_link, locked, gravity, strict,
                                                 **options)).spec)

    @classmethod
    def from_description(cls, description, root_link: str | None = None,
                         tip_link: str | None = None, strict_inertia: bool = False,
                         xacro_arguments: dict | None = None) -> "RobotModel":
        """
        Build a model from any robot description as ROS parameters and commands give it.

        A shipped robot name, a YAML path, a URDF or xacro path (``.urdf``, ``.xml``,
        ``.xacro`` or XML content) or URDF XML text (robot_state_publisher's
        ``robot_description``).  ``root_link``, ``tip_link`` apply to URDF descriptions only,
        ``xacro_arguments`` to xacro ones; ``strict_inertia`` refuses inconsistent inertias.
        """
        from .urdf import is_urdf
        if is_urdf(description):
            return cls.from_urdf(description, root_link or None, tip_link or None,
                                 strict_inertia=strict_inertia,
                                 xacro_arguments=xacro_arguments or None)
        if root_link or tip_link:
            raise RobotDescriptionError(f"{description}: root_link and tip_link apply to URDF "
                                        "descriptions only, not to a YAML robot file")
        if xacro_arguments:
            raise RobotDescriptionError(f"{description}: xacro arguments apply to xacro files "
                                        "only, not to a YAML robot file")
        return cls.named(description, strict_inertia)

    @classmethod
    def named(cls, name_or_path: str | Path, strict_inertia: bool = False) -> "RobotModel":
        """Load a robot shipped in config/robots (e.g. 'puma560') or a YAML file's path."""
        return cls.from_yaml(resolve_robot_path(name_or_path), strict_inertia)

    # -- derived models -----------------------------------------------------------------------
    def to_dict(self) -> dict:
        """Return the normalised description (a deep copy), suitable for :meth:`from_dict`."""
        return copy.deepcopy(self._spec)

    def rigid(self) -> "RobotModel":
        """Return the rigid-body model: the same robot without rotor inertia and friction."""
        spec = self.to_dict()
        for j in spec["joints"]:
            j["motor"] = {"rotor_inertia": 0.0, "gear_ratio": 1.0}
            j["friction"] = {"viscous": 0.0, "coulomb": 0.0, "offset": 0.0}
        spec.pop("coupling", None)      # (couples rotors and friction only: none left)
        return RobotModel(spec)

    def without_friction(self) -> "RobotModel":
        spec = self.to_dict()
        for j in spec["joints"]:
            j["friction"] = {"viscous": 0.0, "coulomb": 0.0, "offset": 0.0}
        return RobotModel(spec)

    def with_payload(self, mass: float, com=(0.0, 0.0, 0.0), inertia=None) -> "RobotModel":
        """
        Return a copy with this payload (replacing any previous one) on the last link.

        ``com`` and ``inertia`` (about the payload's CoM; a mapping ixx..iyz or a 3x3 array) are
        in the tool frame, which is the last link frame when the file gives no tool transform.
        """
        if inertia is None:
            inertia = {"ixx": 0.0, "iyy": 0.0, "izz": 0.0}
        elif not isinstance(inertia, dict):
            tensor = np.asarray(inertia, dtype=float)
            if tensor.shape != (3, 3):
                raise InputError("payload inertia must be a mapping or a 3x3 matrix, "
                                 f"got shape {tensor.shape}")
            if not np.allclose(tensor, tensor.T, rtol=1e-12, atol=0.0):
                raise InputError(
                    f"payload inertia must be a symmetric 3x3 matrix, got {tensor.tolist()}")
            inertia = inertia_entries(tensor)
        spec = self.to_dict()
        com = list(com) if np.ndim(com) == 1 else com      # anything else: the validator names it
        spec["payload"] = {"mass": mass, "com": com, "inertia": dict(inertia)}
        return RobotModel.from_dict(spec, f"{self.name} payload")

    # -- internal chain -----------------------------------------------------------------------
    def _build_chain(self) -> Chain:
        n = self.n
        prismatic = np.array([t == "prismatic" for t in self.joint_types])
        if self.convention == "modified":
            alpha_prev, a_prev = self.dh_alpha.copy(), self.dh_a.copy()
            offsets = np.tile(np.eye(4), (n, 1, 1))
        else:
            alpha_prev = np.concatenate([[0.0], self.dh_alpha[:-1]])
            a_prev = np.concatenate([[0.0], self.dh_a[:-1]])
            offsets = np.array([homogeneous(rot_x(al), [a, 0.0, 0.0])
                                for a, al in zip(self.dh_a, self.dh_alpha)])
        # A link may be given in its own frame (URDF link frames), placed in its joint's DH frame.
        offsets = np.array([
            offset if j["link_frame"] is None else offset @ pose_matrix(j["link_frame"])
            for offset, j in zip(offsets, self._spec["joints"])])
        R, p = offsets[:, :3, :3], offsets[:, :3, 3]
        com = np.einsum("nij,nj->ni", R, self.com) + p
        inertia = np.einsum("nij,njk,nlk->nil", R, self.inertia, R)
        e_prev = self.dh_e if self.convention == "modified" else np.zeros(n)
        p_prev = [placement(*row) for row in zip(alpha_prev, a_prev, e_prev, self.dh_d)]
        return Chain(
            alpha_prev=_frozen(alpha_prev), a_prev=_frozen(a_prev),
            theta0=_frozen(self.dh_theta), d0=_frozen(self.dh_d),
            e_prev=_frozen(e_prev), p_prev=_frozen(np.array(p_prev).reshape(n, 3)),
            prismatic=_frozen(prismatic, bool),
            mass=self.mass, com=_frozen(com), inertia=_frozen(inertia),
            rotor_inertia=self.rotor_inertia, gear_ratio=self.gear_ratio,
            viscous=self.viscous, coulomb=self.coulomb,
            link_offset=_frozen(offsets), flange=_frozen(offsets[-1] @ self.tool),
            base=self.base, gravity_base=_frozen(self.base[:3, :3].T @ self.gravity))

    def require_limits(self, kinds, purpose: str, option: str = "") -> None:
        """
        Raise RobotDescriptionError if a joint's limit of a kind in ``kinds`` is unknown.

        ``kinds``: some of "position", "velocity", "effort"; ``purpose`` says what needs them
        (e.g. "time scaling"), ``option`` how the user may give them instead.
        """
        for joint, unknown in self.unknown_limits.items():
            for kind in unknown:
                if kind in kinds:
                    hint = f"; give it with {option}" if option else ""
                    raise RobotDescriptionError(
                        f"{self.name}: joint '{joint}': its {kind} limit is unknown (the "
                        f"description gives none, 0 or a value that is not finite): {purpose} "
                        f"needs it{hint}")

    def coupled_friction_change(self, qd, viscous: bool = True) -> np.ndarray:
        """
        Return what the drive coupling changes in F_v qd + F_s sgn(qd) (``coupling.py``).

        A method, so that the friction law (``control/friction.py``, which this package
        imports) needs no import of the model package.
        """
        return friction_change(self, qd, viscous)

    def coupled_quadratic_change(self, qd) -> np.ndarray:
        """Return the F_v2 part of :meth:`coupled_friction_change` alone (``coupling.py``)."""
        return quadratic_change(self, qd)

    def refuse_coupled_friction(self, purpose: str,
                                kinds=("viscous", "coulomb", "viscous_quadratic",
                                       "joint_viscous", "joint_coulomb")) -> None:
        """
        Raise RobotDescriptionError if a coupled drive has friction of ``kinds``.

        For what applies friction per joint (``purpose`` says what), not per drive through the
        coupling (``core/model/coupling.py``): its result would be wrong for such a drive.
        """
        values = {"viscous": self.viscous, "coulomb": self.coulomb,
                  "viscous_quadratic": self.viscous_quadratic,
                  "joint_viscous": self.joint_viscous, "joint_coulomb": self.joint_coulomb}
        drives = [self.joint_names[i] for i in self.coupled_drives
                  if any(values[kind][i] != 0.0 for kind in kinds)]
        if drives:
            raise RobotDescriptionError(
                f"{self.name}: the drives of joint(s) {drives} move with other joints (coupling) "
                f"and have friction ({' or '.join(kinds)}): {purpose} applies friction per "
                "joint, so it cannot take theirs")

    @property
    def has_motors(self) -> bool:
        return bool(np.any(self.rotor_inertia != 0.0))

    @property
    def has_coupling(self) -> bool:
        """Whether a drive moves with more than its own joint (``coupling``, model/coupling.py)."""
        return bool(self.coupled_drives)

    @property
    def has_friction(self) -> bool:
        return bool(np.any(self.viscous != 0.0) or np.any(self.coulomb != 0.0)
                    or self.has_extra_friction or np.any(self.joint_viscous != 0.0)
                    or np.any(self.joint_coulomb != 0.0))

    @property
    def has_extra_friction(self) -> bool:
        """Whether a joint has F_v2 qd|qd| or F_l |g(q)| sgn(qd) (``control.friction``)."""
        return bool(np.any(self.viscous_quadratic != 0.0) or np.any(self.coulomb_load != 0.0))

    @property
    def has_torque_offset(self) -> bool:
        return bool(np.any(self.torque_offset != 0.0))

    def __repr__(self) -> str:
        return f"RobotModel({self.name!r}, n={self.n}, {self.convention} DH)"


def shipped_robots() -> list[str]:
    """Names of the robots shipped in config/robots."""
    return sorted({p.stem for d in ROBOT_DIRS if d.is_dir() for p in d.glob("*.yaml")})


def resolve_robot_path(name_or_path: str | Path) -> Path:
    """Map a shipped robot name ('puma560') or a file path to the YAML path (else error)."""
    text = str(name_or_path)
    if len(text) > 4096 or "\n" in text:        # not a name nor a path: never echo it whole
        raise RobotDescriptionError(f"{text[:60]!r}... ({len(text)} characters): neither a "
                                    "robot file's path, a shipped robot's name nor URDF text")
    candidate = Path(name_or_path)
    if candidate.suffix in (".yaml", ".yml") or candidate.exists():
        return candidate
    for directory in ROBOT_DIRS:
        shipped = directory / f"{name_or_path}.yaml"
        if shipped.exists():
            return shipped
    raise RobotDescriptionError(
        f"{name_or_path}: no such robot file, and not a shipped robot {shipped_robots()}")
