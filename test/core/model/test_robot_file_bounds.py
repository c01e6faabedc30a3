"""Robot files: value bounds, overflowing angle expressions and fuzzed files."""

import random

import numpy as np
import pytest

from robot_dynamics_ros.core import (RobotDescriptionError, RobotModel, gravity_torques,
                                     mass_matrix, resolve_robot_path, rnea, shipped_robots)
from robot_dynamics_ros.core.model.robot_file import BOUNDS
from yaml_texts import PLANAR, error_text


@pytest.mark.parametrize("angle", ["'" + "9" * 400 + "*pi'", "'pi/0." + "0" * 400 + "1'"])
def test_angle_expressions_that_overflow_are_rejected(tmp_path, angle):
    """D2: they became +-inf and rnea later raised 'math domain error'."""
    text = PLANAR.replace("alpha: 0.0", f"alpha: {angle}", 1)
    message = error_text(tmp_path, text)
    assert "joint1" in message and "dh.alpha" in message
    assert "finite" in message or "divides by zero" in message   # (1e-401 is zero in floats)
    assert len(message) < 400                # the 400-digit value is not repeated in full


@pytest.mark.parametrize("field, replacement, fragment", [
    ("mass: 50.0", "mass: 1.0e+300", "link.mass"),
    ("a: 1.0", "a: 1.0e+200", "dh.a"),
    ("iyy: 10.0", "iyy: 1.0e+300", "link.inertia.iyy"),
    ("gravity: [0.0, -9.81, 0.0]", "gravity: [0.0, -1.0e+308, 0.0]", "gravity[1]"),
    ("gear_ratio: 100.0", "gear_ratio: 1.0e+200", "motor.gear_ratio"),
])
def test_huge_finite_values_are_out_of_range(tmp_path, field, replacement, fragment):
    """D7: values up to 1e308 were accepted and rnea / mass_matrix returned inf or NaN."""
    text = PLANAR.replace(field, replacement, 1)
    assert text != PLANAR, field
    message = error_text(tmp_path, text)
    assert fragment in message and "out of range" in message


def test_bounds_table_covers_every_kind_used():
    assert set(BOUNDS) >= {"length", "angle", "mass", "inertia", "gravity", "velocity", "effort",
                           "gear_ratio", "rotor_inertia", "friction"}


# ------------------------------------------------------------------------------------- fuzzing
_TOKENS = ["", "0", "-1", "1e308", "-1e308", "1e-320", ".nan", ".inf", "-.inf", "pi/0",
           "'9" + "9" * 40 + "*pi'", "[]", "{}", "[1, 2]", "{a: 1}", "null", "true", "'x'", "1:30",
           "0x1f", "*anchor", "&anchor 1", "<<: {a: 1}", "\"\\xff\"", "[[[[[[]]]]]]", "- 1",
           "1_000", "0.5", "2", "100000", "-0.0"]


def _mutate(text: str, rng: random.Random) -> str:
    lines = text.splitlines()
    for _ in range(rng.randint(1, 3)):
        k = rng.randrange(len(lines))
        line = lines[k]
        action = rng.random()
        if action < 0.55 and ":" in line:                        # replace a value
            head, _, _ = line.partition(":")
            lines[k] = f"{head}: {rng.choice(_TOKENS)}"
        elif action < 0.7 and "," in line:                       # replace one flow-sequence entry
            parts = line.split(",")
            j = rng.randrange(len(parts))
            parts[j] = " " + rng.choice(_TOKENS[:20])
            lines[k] = ",".join(parts)
        elif action < 0.8:                                      # duplicate a line
            lines.insert(k, line)
        elif action < 0.9:                                      # drop a line
            del lines[k]
        else:                                                   # swap characters
            if len(line) > 2:
                j = rng.randrange(len(line) - 1)
                lines[k] = line[:j] + line[j + 1] + line[j] + line[j + 2:]
    return "\n".join(lines) + "\n"


def _check_finite_dynamics(model):
    rng = np.random.default_rng(0)
    lower = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    upper = np.where(np.isfinite(model.upper), model.upper, np.pi)
    q = rng.uniform(lower, upper, (16, model.n))
    qd = rng.uniform(-1, 1, (16, model.n)) * model.velocity_limit
    tau = rnea(model, q, qd, qd)
    assert np.isfinite(tau).all()
    assert (np.isfinite(mass_matrix(model, q)).all()
            and np.isfinite(gravity_torques(model, q)).all())


@pytest.mark.parametrize("robot", sorted(shipped_robots()))
def test_fuzzed_robot_files_give_clean_errors_or_finite_models(tmp_path, robot):
    """Seeded mutations of each shipped file: a named error, or a model with finite dynamics."""
    rng = random.Random(f"fuzz-{robot}")
    original = resolve_robot_path(robot).read_text()
    outcomes = {"rejected": 0, "accepted": 0}
    for case in range(80):
        text = _mutate(original, rng)
        path = tmp_path / f"{robot}_{case}.yaml"
        path.write_text(text)
        try:
            model = RobotModel.from_yaml(path)
        except RobotDescriptionError as exc:
            message = str(exc)
            assert str(path) in message and len(message) < 2000, message
            outcomes["rejected"] += 1
            continue
        _check_finite_dynamics(model)
        outcomes["accepted"] += 1
    assert outcomes["rejected"] > 20          # the mutations do exercise the validation
