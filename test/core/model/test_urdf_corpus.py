"""
Real robot descriptions (test/data/urdf, see its README) load by default and agree with Pinocchio.

Every corpus description -- six makers' xacro sources expanded with the ``xacro`` package, a
Doosan URDF and example-robot-data's arms as shipped -- loads with the defaults from its path
(a xacro path with its ``name:=value`` arguments) and from the expanded text, the chain root ->
tool found, and rnea, gravity, mass matrix, Coriolis matrix, forward dynamics (where the mass
matrix is positive definite), tool pose and Jacobian agree with Pinocchio (``buildModelFromXML``
of the same text, ``buildReducedModel`` with the other joints locked at 0) to 1e-11 relative to
max(1, |Pinocchio's value|), forward dynamics to that times the mass matrix's condition number.
Where a vendor's rounded pi makes two neighbouring axes almost parallel (UFACTORY's Lite6,
Kinova's Gen3 6-DoF: 3.1416 in an rpy, 7e-6 rad), the frame before them stays at its joint origin
and the next joint gets a general offset (axes_to_dh.py): those models, and only those, have one,
no warning is given and they are held to the same 1e-11.
"""
import warnings

import numpy as np
import pytest

from robot_dynamics_ros.commands.cli import main as cli_main
from robot_dynamics_ros.core import (RobotModel, coriolis_matrix, forward_dynamics,
                                     gravity_torques, jacobian, mass_matrix, rnea, tool_pose)
from robot_dynamics_ros.core.model.dh_description import modified_dh_description, robot_yaml_text
from urdf_corpus import CORPUS, ament_prefix, expanded, source_path
from urdf_samples import PinocchioChain, relative_error

TOLERANCE = 1e-11


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    """Lay an ament prefix holding the corpus's xacro packages (for $(find ...))."""
    return ament_prefix(tmp_path_factory.mktemp("ament"))


@pytest.fixture
def on_index(prefix, monkeypatch):
    monkeypatch.setenv("AMENT_PREFIX_PATH", prefix)
    return prefix


def _load(source, entry, **options):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = RobotModel.from_urdf(source, tip_link=entry.tip, **options)
    return model, [str(w.message) for w in caught]


def _states(model, rng, count):
    low = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    high = np.where(np.isfinite(model.upper), model.upper, np.pi)
    for _ in range(count):
        yield rng.uniform(low, high), rng.uniform(-2, 2, model.n), rng.uniform(-3, 3, model.n)


def assert_agrees(model, text, rng, count=4):
    """Every quantity of ``model.rigid()`` equals Pinocchio's on ``text``; returns the worst."""
    tip = model.to_dict()["description"].rsplit("'", 2)[-2]
    oracle = PinocchioChain(text, list(model.joint_names), tip)
    rigid, worst = model.rigid(), {}
    for q, qd, qdd in _states(model, rng, count):
        tau = rnea(rigid, q, qd, qdd)
        M = mass_matrix(rigid, q)
        checks = [("rnea", tau, oracle.rnea(q, qd, qdd), TOLERANCE),
                  ("gravity", gravity_torques(rigid, q), oracle.gravity(q), TOLERANCE),
                  ("mass matrix", M, oracle.mass_matrix(q), TOLERANCE),
                  ("coriolis", coriolis_matrix(rigid, q, qd), oracle.coriolis(q, qd), TOLERANCE),
                  ("tool pose", tool_pose(rigid, q), oracle.tool_pose(q), TOLERANCE),
                  ("jacobian", jacobian(rigid, q), oracle.jacobian(q), TOLERANCE)]
        if np.linalg.eigvalsh(M)[0] > 0:       # forward dynamics where M is positive definite
            checks.append(("forward dynamics", forward_dynamics(rigid, q, qd, tau + 1.0),
                           oracle.forward_dynamics(q, qd, tau + 1.0),
                           TOLERANCE * np.linalg.cond(M)))
        for name, ours, theirs, bound in checks:
            error = relative_error(ours, theirs)
            assert error <= bound, f"{model.name}: {name}: error {error:.3g} > {bound:.1g}"
            worst[name] = max(worst.get(name, 0.0), error)
    return worst


@pytest.mark.parametrize("entry", CORPUS, ids=[e.name for e in CORPUS])
def test_corpus_loads_by_default_and_agrees_with_pinocchio(entry, on_index):
    path = source_path(entry, on_index)
    model, quirks = _load(path, entry, xacro_arguments=entry.arguments or None)
    text = expanded(entry, on_index)
    from_text, _ = _load(text, entry)
    assert model.joint_names == from_text.joint_names and model.n >= 2
    ours, theirs = model.to_dict(), from_text.to_dict()
    assert ours.pop("description") != theirs.pop("description") and ours == theirs
    rng = np.random.default_rng(sum(map(ord, entry.name)))
    assert_agrees(model, text, rng)
    q = next(_states(model, rng, 1))[0]
    assert relative_error(rnea(from_text, q, q, q), rnea(model, q, q, q)) == 0.0
    # the quirks it carries are said, one warning each, and nothing else is
    assert any("physically inconsistent inertia" in w for w in quirks) == \
        ("inertia" in entry.quirks), quirks
    assert len(quirks) == len(set(quirks)) and all("inconsistent inertia" in w for w in quirks)
    assert bool(model.unknown_limits) == ("unknown_limits" in entry.quirks)
    # almost parallel axes, and only they, give a joint offset beyond modified DH; the frames
    # stay within the robot (the plain construction put them 27-56 km away)
    assert bool(np.any(model.dh_e)) == ("near_parallel" in entry.quirks)
    assert np.abs(model.chain.p_prev).max() < 2.0


def test_xacro_on_the_command_line(on_index, capsys):
    path = on_index + "/share/ur_description/urdf/ur.urdf.xacro"
    assert cli_main(["check", path, "ur_type:=ur5e", "name:=ur5e", "--tip-link", "tool0"]) == 0
    out = capsys.readouterr().out
    assert "6 joints" in out and "shoulder_pan_joint" in out
    # an argument the file needs, missing: xacro's words, the file named
    assert cli_main(["check", path, "ur_type:=ur5e"]) == 1
    err = capsys.readouterr().err
    assert "ur.urdf.xacro" in err and "undefined argument 'name'" in err


def test_xacro_package_not_on_the_ament_index(monkeypatch, tmp_path):
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(tmp_path))
    entry = CORPUS[0]
    from robot_dynamics_ros.core import RobotDescriptionError
    with pytest.raises(RobotDescriptionError, match="ur_description.*not found"):
        RobotModel.from_urdf(source_path(entry, ament_prefix(tmp_path / "p")),
                             xacro_arguments=entry.arguments)


def test_strict_inertia_refuses_what_the_default_accepts(on_index):
    entry = next(e for e in CORPUS if "inertia" in e.quirks)
    from robot_dynamics_ros.core import RobotDescriptionError
    with pytest.raises(RobotDescriptionError, match=r"link 'link\d': .*triangle inequality.*short "
                                                    r"by .* % of I3.*strict"):
        RobotModel.from_urdf(expanded(entry, on_index), strict_inertia=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        RobotModel.from_urdf(expanded(entry, on_index))
    inertia = [str(w.message) for w in caught if "inconsistent inertia" in str(w.message)]
    assert len(inertia) == len({w.split("link '")[1].split("'")[0] for w in inertia}) >= 1


def test_topic_text_is_never_expanded_as_xacro(on_index):
    """Xacro from the ROS graph would run its ${...} code: refused, the reason said."""
    from robot_dynamics_ros.nodes.dynamics import model_from_topic
    from robot_dynamics_ros.core import RobotDescriptionError
    text = (on_index and '<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'
            '<xacro:property name="l" value="0.1"/><link name="a"/></robot>')
    with pytest.raises(RobotDescriptionError, match="unexpanded xacro"):
        model_from_topic(text)


@pytest.mark.parametrize("entry", [e for e in CORPUS if "near_parallel" in e.quirks],
                         ids=lambda e: e.name)
def test_near_parallel_models_convert_and_check(entry, on_index, tmp_path, capsys):
    """
    The general offsets survive ``convert`` (a modified-DH file with e) and ``check`` shows them.

    The converted file is the same robot: its dynamics equal the URDF model's to rounding.
    """
    model, _ = _load(expanded(entry, on_index), entry)
    path = tmp_path / f"{entry.name}.yaml"
    path.write_text(robot_yaml_text(modified_dh_description(model)))
    converted = RobotModel.from_yaml(path)
    assert np.flatnonzero(converted.dh_e).tolist() == np.flatnonzero(model.dh_e).tolist()
    rng = np.random.default_rng(4)
    for q, qd, qdd in _states(model, rng, 3):
        assert relative_error(rnea(converted, q, qd, qdd), rnea(model, q, qd, qdd)) <= 1e-13
        assert relative_error(tool_pose(converted, q), tool_pose(model, q)) <= 1e-14
    assert cli_main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    joint = model.joint_names[int(np.flatnonzero(model.dh_e)[0])]
    assert "joint offsets beyond modified DH" in out and f"{joint}: e = " in out
