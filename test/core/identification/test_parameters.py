"""Standard parameter vectors of a model, and back."""

import numpy as np
import pytest

from identification_cases import random_models
from random_robots import random_state
from robot_dynamics_ros.core import InputError, RobotModel, rnea
from robot_dynamics_ros.core.identification import (FRICTION_KINDS, consistency_problems,
                                                    model_with_parameters, parameter_names,
                                                    parameter_vector, predicted_effort,
                                                    regressor)
from robot_dynamics_ros.core.identification.parameters import known_friction, parameter_layout


@pytest.mark.parametrize("model", [RobotModel.named("puma560"),
                         random_models()[3]], ids=lambda m: m.name)
def test_model_with_parameters_round_trip(model):
    pi = parameter_vector(model)
    rebuilt = model_with_parameters(model, pi)
    assert np.allclose(parameter_vector(rebuilt), pi, rtol=0, atol=1e-12)
    assert rebuilt.joint_names == model.joint_names and np.array_equal(
        rebuilt.effort_limit, model.effort_limit)
    q, qd, qdd = random_state(model, np.random.default_rng(3), batch=5)
    assert np.allclose(rnea(rebuilt, q, qd, qdd), rnea(model, q, qd, qdd), rtol=1e-12, atol=1e-10)
    assert consistency_problems(model, pi) == []
    assert len(set(parameter_names(model))) == len(parameter_names(model))


def _with_offsets(model, offsets):
    spec = model.to_dict()
    for joint, offset in zip(spec["joints"], offsets):
        joint["friction"]["offset"] = offset
    return RobotModel.from_dict(spec)


def test_friction_kinds_give_columns_whether_or_not_the_file_has_them():
    """Fv, Fc, Fo, Fv2, Fl for every joint when asked; the model's own kinds by default."""
    panda = RobotModel.named("panda")                   # no friction, no offsets
    assert not any(n.startswith("F") for n in parameter_names(panda))
    names = parameter_names(panda, FRICTION_KINDS)
    for joint in panda.joint_names:
        block = [n for n in names if n.endswith(f"[{joint}]")]
        assert block[-5:] == [f"Fv[{joint}]", f"Fc[{joint}]", f"Fo[{joint}]",
                              f"Fv2[{joint}]", f"Fl[{joint}]"]
    assert parameter_names(panda, ("offset", "viscous")) == parameter_names(
        panda, ("viscous", "offset"))                   # canonical order
    with pytest.raises(InputError, match="friction"):
        parameter_names(panda, ("stribeck",))
    puma = _with_offsets(RobotModel.named("puma560"), [0.5, -0.5, 0.1, 0.0, 0.0, 0.2])
    assert [n for n in parameter_names(puma) if n.startswith("F")][:3] == [
        "Fv[joint1]", "Fc[joint1]", "Fo[joint1]"]


def test_offsets_are_measured_not_applied():
    """predicted_effort = rnea + offset = Y pi; model_with_parameters writes fitted offsets."""
    puma = RobotModel.named("puma560")
    offsets = [0.5, -0.5, 0.1, 0.0, 0.0, 0.2]
    model = _with_offsets(puma, offsets)
    q, qd, qdd = random_state(model, np.random.default_rng(4), batch=20)
    assert np.array_equal(rnea(model, q, qd, qdd), rnea(puma, q, qd, qdd))
    measured = predicted_effort(model, q, qd, qdd)
    assert np.allclose(measured, rnea(puma, q, qd, qdd) + offsets, rtol=0, atol=1e-12)
    Y = regressor(model, q, qd, qdd)
    assert np.abs(Y @ parameter_vector(model) - measured).max() <= 1e-10 * np.abs(measured).max()
    # only viscous fitted: the Coulomb torques and offsets are the file's, known
    known = known_friction(model, qd, ("viscous",))
    assert np.allclose(known, model.coulomb * np.sign(qd) + offsets, rtol=0, atol=1e-12)
    pi = parameter_vector(model, FRICTION_KINDS)
    layout = parameter_layout(model, FRICTION_KINDS)
    pi[layout.offset] = [1.0, 2.0, 3.0, 4.0, 5.0, -6.0]
    pi[layout.viscous] *= 2.0
    rebuilt = model_with_parameters(model, pi, friction=FRICTION_KINDS)
    assert np.array_equal(rebuilt.torque_offset, [1.0, 2.0, 3.0, 4.0, 5.0, -6.0])
    assert np.allclose(rebuilt.viscous, 2.0 * model.viscous)
    assert consistency_problems(model, pi, friction=FRICTION_KINDS) == []
    pi[layout.viscous[2]] = -0.1                         # friction may not be negative
    assert "viscous friction" in consistency_problems(model, pi, friction=FRICTION_KINDS)[0]


def test_further_friction_columns_bounds_and_known_terms():
    """
    Fv2, Fl: Y pi is the model's measured effort; bounds named; known terms need positions.

    Y pi = predicted_effort (rnea, whose further terms core.control.friction adds) for the
    model's own kinds, the load column |g(q)| sgn(qd) with the model's own g; F_l >= 1 and F_v2
    below -F_v / (2 v_max) are inconsistent; a known F_l without positions is refused.
    """
    from further_friction import with_further_friction
    from robot_dynamics_ros.core.identification import predicted_effort, regressor
    model = with_further_friction(RobotModel.named("puma560"), 0.3, 0.05)
    assert [n for n in parameter_names(model) if n.startswith(("Fv2[", "Fl["))] == [
        f"{kind}[{joint}]" for joint in model.joint_names for kind in ("Fv2", "Fl")]
    rng = np.random.default_rng(7)
    q, qd, qdd = (rng.normal(size=(20, 6)) for _ in range(3))
    pi = parameter_vector(model)
    np.testing.assert_allclose(regressor(model, q, qd, qdd) @ pi,
                               predicted_effort(model, q, qd, qdd), rtol=1e-10, atol=1e-10)
    layout = parameter_layout(model)
    assert consistency_problems(model, pi) == []
    bad = pi.copy()
    bad[layout.coulomb_load[1]] = 1.2
    bad[layout.viscous_quadratic[2]] = -1e3
    problems = consistency_problems(model, bad)
    assert any("load-dependent Coulomb friction 1.2, not below 1" in p for p in problems)
    assert any("quadratic viscous friction -1000 below" in p and "'joint3'" in p
               for p in problems)
    with pytest.raises(InputError, match="coulomb_load"):
        known_friction(model, qd, ("viscous", "coulomb"))
    known = known_friction(model, qd, ("viscous", "coulomb"), q)
    from robot_dynamics_ros.core import gravity_torques
    np.testing.assert_allclose(known, 0.3 * qd * np.abs(qd) + 0.05 * np.abs(
        gravity_torques(model, q)) * np.sign(qd), rtol=1e-12, atol=1e-12)
