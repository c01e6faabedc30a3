"""
Any model as a modified-DH robot file: what ``robot-dynamics convert`` writes.

The description is the model's internal chain (``model.Chain``) written out: DH rows
(alpha_{i-1}, a_{i-1}, d_i, theta_i, and the offset e_i where the chain has one: a URDF's almost
parallel axes, ``axes_to_dh.py``), link inertias re-expressed in the DH frames, the base and the
tool transform (the tool in the last DH frame), limits, motors, friction, the payload and the
drive coupling as in the model.  Loading it gives the same dynamics, tool pose and Jacobian (to
rounding); the link frames ``forward_kinematics`` returns are then the DH frames.
"""
from __future__ import annotations

import copy

import yaml

from ..transforms import pose_dict, snap_small
from .inertia import Body, inertia_entries, inertia_matrix


def modified_dh_description(model) -> dict:
    """Return the normalised modified-DH description of ``model`` (see the module docstring)."""
    spec = model.to_dict()
    chain = model.chain
    joints = []
    for i, joint in enumerate(spec["joints"]):
        link = joint["link"]
        body = Body(link["mass"], link["com"], inertia_matrix(link["inertia"]))
        body = body.transformed(chain.link_offset[i])
        joints.append({
            **joint,
            "dh": {"a": float(chain.a_prev[i]), "alpha": float(chain.alpha_prev[i]),
                   "d": float(chain.d0[i]), "theta": float(chain.theta0[i]),
                   **({"e": float(chain.e_prev[i])} if chain.e_prev[i] else {})},
            "link": {"mass": body.mass, "com": snap_small(body.com).tolist(),
                     "inertia": inertia_entries(snap_small(body.inertia))},
            "link_frame": None})
    return {**spec, "dh_convention": "modified", "joints": joints,
            "base": pose_dict(chain.base), "tool": pose_dict(chain.flange)}


_DEFAULTS = {"motor": {"rotor_inertia": 0.0, "gear_ratio": 1.0},
             "friction": {"viscous": 0.0, "coulomb": 0.0}}    # (terms at 0 left out first)
_TOP_ORDER = ("name", "description", "dh_convention", "gravity", "base", "tool", "joints",
              "payload", "coupling", "accept_inconsistent_inertia")
_JOINT_ORDER = ("name", "type", "dh", "limits", "link", "link_frame", "motor", "friction")


class _Dumper(yaml.SafeDumper):
    """Lists of numbers on one line; everything else in block style."""


def _represent_list(dumper, data):
    flow = all(isinstance(x, (int, float)) for x in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)


_Dumper.add_representer(list, _represent_list)


def robot_yaml_text(spec: dict, comment: str = "") -> str:
    """
    Return a normalised description as robot-file YAML, without the entries at their defaults.

    Floats are written with Python's shortest round-trip repr, so reading the text back gives
    the same numbers exactly.  ``comment`` lines go first, each prefixed with ``#``.
    """
    spec = copy.deepcopy(spec)
    joints = []
    for joint in spec["joints"]:
        friction = joint.get("friction")
        if friction is not None:        # (terms at 0 beyond F_v, F_s are left out)
            joint = {**joint, "friction": {k: v for k, v in friction.items()
                                           if v != 0.0 or k in ("viscous", "coulomb")}}
        joints.append({k: joint[k] for k in _JOINT_ORDER
                       if joint.get(k) is not None and joint.get(k) != _DEFAULTS.get(k)})
    spec["joints"] = joints
    out = {k: spec[k] for k in _TOP_ORDER if spec.get(k) not in (None, "", False)}
    header = "".join(f"# {line}\n" if line else "#\n" for line in comment.splitlines())
    return header + yaml.dump(out, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
