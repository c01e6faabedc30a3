"""
Any model as a URDF: what ``robot-dynamics urdf`` writes, for robot_state_publisher and RViz.

The URDF's links are the model's internal DH frames (a URDF joint turns its child link frame about
an axis through that frame's origin, which is where the DH frame F_i sits: on joint axis i):

* ``base_link`` is the model's world frame; joint i (revolute, continuous or prismatic, axis
  0 0 1) has the origin T_{i-1,i}(q = 0) (the base transform included for joint 1) and child
  ``link<i>``; a fixed joint places ``tool0`` (the tool frame), and the payload, if any, is the
  link ``payload`` fixed to ``tool0``;
* each link's ``<inertial>`` is the model's link (mass, centre of mass, inertia in the DH frame);
  limits, ``<dynamics damping friction>`` (viscous and Coulomb friction);
* simple cylinders: one along each joint axis and one from each joint to the next (to the tool
  for the last link), sized after the robot, so that RViz shows the arm;
* what URDF cannot say goes into elements of the package's namespace, which other readers
  ignore: ``<robot_dynamics:motor rotor_inertia gear_ratio>``,
  ``<robot_dynamics:limit acceleration>`` and ``<robot_dynamics:friction offset
  viscous_quadratic coulomb_load joint_viscous joint_coulomb>`` (the torque offset, what the
  joint's sensor reports at zero torque; the friction terms F_v2, F_l of
  ``core/control/friction.py``; a coupled joint's joint-side friction,
  ``core/model/coupling.py``) in a joint, and
  ``<robot_dynamics:gravity xyz>`` when gravity is not [0, 0, -9.81], and
  ``<robot_dynamics:coupling joints matrix>`` when the model couples drives.

Numbers are written with Python's shortest round-trip repr: reading the file back gives the same
model to rounding (``RobotModel.from_urdf``; Pinocchio reads the same rigid-body model).
"""
from __future__ import annotations

from xml.sax.saxutils import quoteattr

import numpy as np

from ..transforms import homogeneous, joint_transform, rpy_from_matrix
from .inertia import Body, inertia_matrix
from .robot_file import DEFAULT_GRAVITY
from .urdf_xml import EXTENSION_NS

_COLORS = (("joint_color", "0.9 0.5 0.1 1"), ("link_color", "0.6 0.6 0.65 1"))


def _num(x: float) -> str:
    return repr(float(x) + 0.0)


def _vec(v) -> str:
    return " ".join(_num(x) for x in v)


def _origin(T: np.ndarray) -> str:
    return f'<origin xyz="{_vec(T[:3, 3])}" rpy="{_vec(rpy_from_matrix(T[:3, :3]))}"/>'


def _inertial(body: Body, indent: str) -> list[str]:
    inertia = body.inertia
    entries = " ".join(f'{name}="{_num(inertia[i, j])}"' for name, i, j in (
        ("ixx", 0, 0), ("ixy", 0, 1), ("ixz", 0, 2), ("iyy", 1, 1), ("iyz", 1, 2), ("izz", 2, 2)))
    return [f"{indent}<inertial>",
            f'{indent}  <origin xyz="{_vec(body.com)}" rpy="0 0 0"/>',
            f'{indent}  <mass value="{_num(body.mass)}"/>',
            f"{indent}  <inertia {entries}/>",
            f"{indent}</inertial>"]


def _cylinder(start, end, radius: float, material: str, indent: str) -> list[str]:
    """Return a cylinder visual from ``start`` to ``end`` (none if they nearly coincide)."""
    start, end = np.asarray(start, float), np.asarray(end, float)
    length = float(np.linalg.norm(end - start))
    if length < 1e-6:
        return []
    z = (end - start) / length
    x = np.cross(z, [1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.cross(z, [0.0, 1.0, 0.0])
    x /= np.linalg.norm(x)
    T = homogeneous(np.column_stack([x, np.cross(z, x), z]), (start + end) / 2)
    shape = f'<cylinder radius="{radius:.4g}" length="{length:.6g}"/>'
    return [f"{indent}<visual>", f"{indent}  {_origin(T)}",
            f"{indent}  <geometry>{shape}</geometry>",
            f'{indent}  <material name="{material}"/>', f"{indent}</visual>"]


def _unique(name: str, taken: set) -> str:
    candidate, k = name, 1
    while candidate in taken:
        k += 1
        candidate = f"{name}_{k}"
    taken.add(candidate)
    return candidate


def _joint(joint: dict, parent: str, child: str, origin: np.ndarray) -> list[str]:
    limits, friction, motor = joint["limits"], joint["friction"], joint["motor"]
    # An unknown limit (None) is written as URDF says "not specified": 0, lower and upper both 0.
    value = {k: _num(limits.get(k) or 0.0) for k in ("lower", "upper", "velocity", "effort")}
    position = "" if joint["type"] == "continuous" else \
        f'lower="{value["lower"]}" upper="{value["upper"]}" '
    out = [f'  <joint name={quoteattr(joint["name"])} type="{joint["type"]}">',
           f"    <parent link={quoteattr(parent)}/>",
           f"    <child link={quoteattr(child)}/>",
           f"    {_origin(origin)}",
           '    <axis xyz="0 0 1"/>',
           f'    <limit {position}velocity="{value["velocity"]}" effort="{value["effort"]}"/>']
    if friction["viscous"] or friction["coulomb"]:
        out.append(f'    <dynamics damping="{_num(friction["viscous"])}" '
                   f'friction="{_num(friction["coulomb"])}"/>')
    extension = " ".join(f'{key}="{_num(friction[key])}"' for key in
                         ("offset", "viscous_quadratic", "coulomb_load", "joint_viscous",
                          "joint_coulomb") if friction.get(key, 0.0))
    if extension:
        out.append(f"    <robot_dynamics:friction {extension}/>")
    if "acceleration" in limits:
        out.append(f'    <robot_dynamics:limit acceleration="{_num(limits["acceleration"])}"/>')
    if motor["rotor_inertia"] != 0.0 or motor["gear_ratio"] != 1.0:
        out.append(f'    <robot_dynamics:motor rotor_inertia="{_num(motor["rotor_inertia"])}" '
                   f'gear_ratio="{_num(motor["gear_ratio"])}"/>')
    return out + ["  </joint>"]


def _fixed_joint(name: str, parent: str, child: str, origin: np.ndarray) -> list[str]:
    return [f'  <joint name={quoteattr(name)} type="fixed">',
            f"    <parent link={quoteattr(parent)}/>", f"    <child link={quoteattr(child)}/>",
            f"    {_origin(origin)}", "  </joint>"]


def urdf_text(model, source: str = "") -> str:
    """Return the URDF of ``model`` (see the module docstring); ``source`` goes in a comment."""
    ch, spec = model.chain, model.to_dict()
    n = model.n
    origins = [joint_transform(ch.alpha_prev[i], ch.theta0[i], ch.p_prev[i]) for i in range(n)]
    origins[0] = ch.base @ origins[0]
    reach = sum(float(np.linalg.norm(T[:3, 3])) for T in origins[1:])
    reach += float(np.linalg.norm(ch.flange[:3, 3]))
    radius = max(0.005, 0.04 * max(reach, 0.1))
    links = ["base_link"] + [f"link{i + 1}" for i in range(n)]
    joint_names = set(model.joint_names)
    origin_note = (source or model.name).replace("--", "- -")      # "--" may not be in a comment
    out = ['<?xml version="1.0"?>',
           f"<!-- generated by `robot-dynamics urdf` from {origin_note} (robot_dynamics_ros): "
           "links are the DH frames -->",
           f'<robot name={quoteattr(model.name)} xmlns:robot_dynamics="{EXTENSION_NS}">']
    for name, rgba in _COLORS:
        out.append(f'  <material name="{name}"><color rgba="{rgba}"/></material>')
    if not np.array_equal(model.gravity, DEFAULT_GRAVITY):
        out.append(f'  <robot_dynamics:gravity xyz="{_vec(model.gravity)}"/>')
    if spec.get("coupling") is not None:
        coupling = spec["coupling"]
        out.append(f'  <robot_dynamics:coupling joints={quoteattr(" ".join(coupling["joints"]))} '
                   f'matrix="{"  ".join(_vec(row) for row in coupling["matrix"])}"/>')
    out.append('  <link name="base_link">')
    out += _cylinder([0, 0, 0], origins[0][:3, 3], radius, "link_color", "    ")
    out.append("  </link>")
    for i, joint in enumerate(spec["joints"]):
        link = joint["link"]
        body = Body(link["mass"], link["com"], inertia_matrix(link["inertia"]))
        body = body.transformed(ch.link_offset[i])
        nxt = origins[i + 1][:3, 3] if i + 1 < n else ch.flange[:3, 3]
        out.append(f"  <link name={quoteattr(links[i + 1])}>")
        if body.mass != 0.0 or np.any(body.inertia != 0.0):
            out += _inertial(body, "    ")
        axis_start, axis_end = [0, 0, -1.5 * radius], [0, 0, 1.5 * radius]
        out += _cylinder(axis_start, axis_end, 1.3 * radius, "joint_color", "    ")
        out += _cylinder([0, 0, 0], nxt, radius, "link_color", "    ")
        out.append("  </link>")
        out += _joint(joint, links[i], links[i + 1], origins[i])
    out.append('  <link name="tool0"/>')
    out += _fixed_joint(_unique("tool0_joint", joint_names), links[-1], "tool0", ch.flange)
    payload = spec["payload"]
    if payload is not None:
        body = Body(payload["mass"], payload["com"], inertia_matrix(payload["inertia"]))
        out += ['  <link name="payload">'] + _inertial(body, "    ") + ["  </link>"]
        out += _fixed_joint(_unique("payload_joint", joint_names), "tool0", "payload", np.eye(4))
    out.append("</robot>")
    return "\n".join(out) + "\n"
