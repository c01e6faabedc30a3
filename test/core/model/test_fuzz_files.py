"""
Fuzzing the robot files (robot YAML, URDF text): hostile or damaged files as a user might give.

Property (hypothesis, derandomized, bounded): a mutated copy of a valid robot file either
loads into a model whose dynamics are finite at a configuration (inverse dynamics, mass
matrix), or is refused with the package's own error (core/errors.py) naming the file; never
another exception (a traceback).  Mutations: a number replaced by an extreme or non-number
(nan, inf, 1e308, -1, 0, text), a line deleted or doubled, the text cut short.
"""
import re

import numpy as np
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from robot_dynamics_ros.core import (RobotDynamicsError, RobotModel, mass_matrix,
                                     resolve_robot_path, rnea)
from robot_dynamics_ros.core.model.urdf_export import urdf_text

# no shrinking: a failure is reported as found (bounded time; the seed is fixed)
SETTINGS = settings(derandomize=True, max_examples=40, deadline=None, database=None,
                    phases=(Phase.explicit, Phase.generate),
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])
NUMBER = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")
EXTREMES = ["nan", ".nan", "inf", "-inf", ".inf", "1e308", "-1e308", "1e-320", "0", "-1",
            "0.0", "x", "", "[]", "{}", "1e400"]


@st.composite
def mutated(draw, text: str):
    """Return ``text`` with one to three mutations (see the module)."""
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["number", "number", "delete", "double", "cut"]))
        lines = text.splitlines(keepends=True)
        spans = [m.span() for m in NUMBER.finditer(text)]
        if kind == "number" and spans:
            start, end = draw(st.sampled_from(spans))
            text = text[:start] + draw(st.sampled_from(EXTREMES)) + text[end:]
        elif kind in ("delete", "double") and lines:
            k = draw(st.integers(0, len(lines) - 1))
            lines[k:k + 1] = [] if kind == "delete" else [lines[k], lines[k]]
            text = "".join(lines)
        elif kind == "cut":
            text = text[:draw(st.integers(0, len(text)))]
    return text


def check_file(path):
    """Load ``path``: a finite model or one clear error naming the file."""
    try:
        model = RobotModel.from_description(str(path))
    except RobotDynamicsError as exc:
        assert path.name in str(exc), str(exc)
        return
    q = np.full(model.n, 0.3)
    tau, inertia = rnea(model, q, q, q), mass_matrix(model, q)
    assert np.isfinite(tau).all() and np.isfinite(inertia).all(), (tau, inertia)


def robot_yaml():
    """Return the text of the shipped Puma 560 robot file."""
    return resolve_robot_path("puma560").read_text()


@SETTINGS
@given(data=st.data())
def test_a_mutated_robot_yaml_loads_finite_or_is_refused_by_name(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("yaml") / "fuzzed_robot.yaml"
    path.write_text(data.draw(mutated(robot_yaml())))
    check_file(path)


@SETTINGS
@given(data=st.data())
def test_a_mutated_urdf_loads_finite_or_is_refused_by_name(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("urdf") / "fuzzed_robot.urdf"
    path.write_text(data.draw(mutated(urdf_text(RobotModel.named("puma560")))))
    check_file(path)
