"""
Real robot descriptions (test/data/urdf, see its README) load by default and agree with Pinocchio.

Every corpus description -- six makers' xacro sources expanded with the ``xacro`` package, a
Doosan URDF and example-robot-data's arms as shipped -- loads with the defaults from its path
(a xacro path with its ``name:=value`` arguments) and from the expanded text, the chain root ->
tool found, and rnea, gravity, mass matrix, Coriolis matrix, forward dynamics (where the mass
matrix is positive definite), tool pose and Jacobian agree with Pinocchio (``buildModelFromXML``
of the same text, ``buildReducedModel`` with the other joints locked at 0) to 1e-11 relative to
max(1, |Pinocchio's value|).  Where a vendor's rounded pi makes two neighbouring axes almost
parallel the modified-DH frames lie far away and the method loses accuracy in proportion: the
tolerance grows with kappa = (largest DH length) / 1 m, as eps kappa for first-order quantities
and eps kappa^2 for the mass matrix and forward dynamics (axes_to_dh.FAR_NORMAL_ACCURACY).
"""
import warnings

import numpy as np
import pytest

from robot_dynamics_ros.cli import main as cli_main
from robot_dynamics_ros.core import (RobotModel, coriolis_matrix, forward_dynamics,
                                     gravity_torques, jacobian, mass_matrix, rnea, tool_pose)
from urdf_corpus import CORPUS, ament_prefix, expanded, source_path
from urdf_samples import PinocchioChain, relative_error

TOLERANCE = 1e-11
EPS = np.finfo(float).eps


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


def _tolerances(model):
    kappa = max(1.0, float(np.abs(model.dh_a).max()), float(np.abs(model.dh_d).max()))
    first = max(TOLERANCE, 64 * EPS * kappa)
    return first, max(TOLERANCE, 64 * EPS * kappa ** 2)


def _states(model, rng, count):
    low = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    high = np.where(np.isfinite(model.upper), model.upper, np.pi)
    for _ in range(count):
        yield rng.uniform(low, high), rng.uniform(-2, 2, model.n), rng.uniform(-3, 3, model.n)


def assert_agrees(model, text, rng, count=4):
    """Every quantity of ``model.rigid()`` equals Pinocchio's on ``text``; returns the worst."""
    tip = model.to_dict()["description"].rsplit("'", 2)[-2]
    oracle = PinocchioChain(text, list(model.joint_names), tip)
    rigid, (first, second), worst = model.rigid(), _tolerances(model), {}
    for q, qd, qdd in _states(model, rng, count):
        tau = rnea(rigid, q, qd, qdd)
        M = mass_matrix(rigid, q)
        checks = [("rnea", tau, oracle.rnea(q, qd, qdd), first),
                  ("gravity", gravity_torques(rigid, q), oracle.gravity(q), first),
                  ("mass matrix", M, oracle.mass_matrix(q), second),
                  ("coriolis", coriolis_matrix(rigid, q, qd), oracle.coriolis(q, qd), first),
                  ("tool pose", tool_pose(rigid, q), oracle.tool_pose(q), first),
                  ("jacobian", jacobian(rigid, q), oracle.jacobian(q), first)]
        if np.linalg.eigvalsh(M)[0] > 0:       # forward dynamics where M is positive definite
            checks.append(("forward dynamics", forward_dynamics(rigid, q, qd, tau + 1.0),
                           oracle.forward_dynamics(q, qd, tau + 1.0),
                           second * np.linalg.cond(M)))
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
    said = {"inertia": "physically inconsistent inertia", "far_normal": "almost parallel"}
    for quirk, words in said.items():
        assert any(words in w for w in quirks) == (quirk in entry.quirks), quirks
    assert bool(model.unknown_limits) == ("unknown_limits" in entry.quirks)


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
