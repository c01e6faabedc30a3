"""
What a node's run-time parameters change in its robot: the payload and the gravity vector.

:class:`ModelSettings` is ``payload.*`` and ``gravity`` as one value, read from the parameters
(an unset one is the robot file's: :meth:`ModelSettings.of_model`) and put on the robot as a
whole by :meth:`ModelSettings.applied_to`, which validates it (the robot file's rules: finite,
bounded, a physical payload) and raises RobotDescriptionError naming the parameter.  A new
value is a new model (and new generated dynamics), never a change to the old one.

Gravity is in the root (world) frame: the frame of a robot file's ``gravity``, a URDF chain's
root link.  An arm on a wall or a ceiling computes with its true gravity direction without a new
robot file: e.g. ``[9.81, 0, 0]`` when the root x axis points up.
"""
from __future__ import annotations

from typing import NamedTuple

from ..core import RobotDescriptionError, RobotModel
from .dynamics import Payload


class ModelSettings(NamedTuple):
    """The payload and the gravity [m/s^2, root frame] the node computes with."""

    payload: Payload
    gravity: tuple

    @classmethod
    def of_model(cls, model: RobotModel | None) -> "ModelSettings":
        """Read the settings of a robot file (no model yet: no payload, standard gravity)."""
        gravity = tuple(float(g) for g in model.gravity) if model is not None else \
            (0.0, 0.0, -9.81)
        return cls(Payload.of_model(model), gravity)

    @classmethod
    def from_values(cls, values: dict, model: RobotModel | None) -> "ModelSettings":
        """Read the parameters; one still unset (None) is the robot file's (see of_model)."""
        own = cls.of_model(model)
        mass, com, inertia = (values.get(f"payload.{k}") for k in ("mass", "com", "inertia"))
        payload = Payload(own.payload.mass if mass is None else float(mass),
                          own.payload.com if com is None else tuple(com),
                          own.payload.inertia if inertia is None else tuple(inertia))
        gravity = values.get("gravity")
        return cls(payload, own.gravity if gravity is None else tuple(float(g) for g in gravity))

    def parameter_values(self) -> dict:
        """Return the settings as parameter values (what an unset parameter is given)."""
        return {"payload.mass": float(self.payload.mass),
                "payload.com": [float(c) for c in self.payload.com],
                "payload.inertia": [float(i) for i in self.payload.inertia],
                "gravity": [float(g) for g in self.gravity]}

    def applied_to(self, base: RobotModel) -> RobotModel:
        """Put the gravity, then the payload, on ``base``; RobotDescriptionError names which."""
        if len(self.gravity) != 3:
            raise RobotDescriptionError("gravity: expected 3 values (x, y, z in the root frame), "
                                        f"got {len(self.gravity)}")
        model = base
        if tuple(base.gravity.tolist()) != self.gravity:
            spec = base.to_dict()
            spec["gravity"] = list(self.gravity)
            try:
                model = RobotModel.from_dict(spec, f"{base.name} with gravity parameter")
            except (RobotDescriptionError, ValueError) as exc:
                raise RobotDescriptionError(f"gravity: {exc}") from None
        if self.payload == Payload.of_model(base):
            return model                  # the robot's own payload (validated with the robot)
        return self.payload.applied_to(model)
