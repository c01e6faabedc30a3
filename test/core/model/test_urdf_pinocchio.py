"""
URDF robots against Pinocchio: the same URDF read by both gives the same dynamics to 1e-12.

Compared: inverse dynamics, gravity, mass matrix, Coriolis matrix, forward dynamics, tool pose and
Jacobian (Pinocchio's ``rnea``, ``computeGeneralizedGravity``, ``crba``, ``computeCoriolisMatrix``,
``aba``, frame placement and ``LOCAL_WORLD_ALIGNED`` frame Jacobian), single configurations and
batches, relative to max(1, |Pinocchio's value|), on: the shipped robots exported with
``robot-dynamics urdf``; random URDF trees (rotated origins, odd axes, inertial rpy, revolute,
continuous and prismatic joints, fixed links, branches and a mimic joint locked at random
positions, an arm hanging from the root); chains that start and end in the middle of a tree.
Pinocchio models the rigid bodies, so our model is compared through ``rigid()``.
"""

import numpy as np
import pinocchio as pin
import pytest

from generated_checks import TOLERANCE
from robot_dynamics_ros.commands.cli import main as cli_main
from robot_dynamics_ros.core import (RobotModel, coriolis_matrix, forward_dynamics,
                                     forward_kinematics, gravity_torques, jacobian, mass_matrix,
                                     rnea, tool_pose)
from urdf_samples import PinocchioChain, _inertial, random_urdf, relative_error

SHIPPED = ["panda", "planar2", "puma560", "renaud6r", "stanford"]


def _random_state(model, rng, batch=None):
    shape = (model.n,) if batch is None else (batch, model.n)
    low = np.where(np.isfinite(model.lower), model.lower, -2 * np.pi)
    high = np.where(np.isfinite(model.upper), model.upper, 2 * np.pi)
    return (rng.uniform(low, high, shape), rng.uniform(-2, 2, shape), rng.uniform(-3, 3, shape))


def forward_dynamics_bound(B) -> float:
    """
    Return the bound on forward dynamics' relative error that TOLERANCE on its inputs implies.

    qdd solves B qdd = b; with B and b each within TOLERANCE x max(1, size) (what the other rows
    assert), perturbation theory gives |d qdd| <= TOLERANCE ||B^-1|| max(1, ||B||) (1 + |qdd|),
    i.e. the condition number of B for a mass matrix of norm >= 1: how much the solve magnifies
    the last bits either library's arithmetic (and BLAS kernel) leaves in B and b.
    """
    B = np.asarray(B, dtype=float)
    return 2.0 * TOLERANCE * np.linalg.norm(np.linalg.inv(B), 2) * max(1.0, np.linalg.norm(B, 2))


def assert_matches_pinocchio(model, oracle: PinocchioChain, rng, trials=4):
    """Every quantity of ``model.rigid()`` equals Pinocchio's to TOLERANCE; returns the worst."""
    rigid = model.rigid()
    worst = {}
    for _ in range(trials):
        q, qd, qdd = _random_state(model, rng)
        tau = rnea(rigid, q, qd, qdd)
        for name, ours, theirs, bound in (
                ("rnea", tau, oracle.rnea(q, qd, qdd), TOLERANCE),
                ("gravity", gravity_torques(rigid, q), oracle.gravity(q), TOLERANCE),
                ("mass matrix", mass_matrix(rigid, q), oracle.mass_matrix(q), TOLERANCE),
                ("coriolis", coriolis_matrix(rigid, q, qd), oracle.coriolis(q, qd), TOLERANCE),
                ("forward dynamics", forward_dynamics(rigid, q, qd, tau + 1.0),
                 oracle.forward_dynamics(q, qd, tau + 1.0),
                 forward_dynamics_bound(oracle.mass_matrix(q))),
                ("tool pose", tool_pose(rigid, q), oracle.tool_pose(q), TOLERANCE),
                ("jacobian", jacobian(rigid, q), oracle.jacobian(q), TOLERANCE)):
            error = relative_error(ours, theirs)
            assert error <= bound, f"{name}: relative error {error:.3g} (bound {bound:.3g})"
            worst[name] = max(worst.get(name, 0.0), error)
    # A batch gives what Pinocchio gives one by one.
    q, qd, qdd = _random_state(model, rng, batch=5)
    expected = [oracle.rnea(*state) for state in zip(q, qd, qdd)]
    assert relative_error(rnea(rigid, q, qd, qdd), expected) <= TOLERANCE
    assert relative_error(mass_matrix(rigid, q), [oracle.mass_matrix(x) for x in q]) <= TOLERANCE
    assert relative_error(jacobian(rigid, q), [oracle.jacobian(x) for x in q]) <= TOLERANCE
    return worst


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """Write the shipped robots with `robot-dynamics urdf`."""
    directory = tmp_path_factory.mktemp("exported")
    paths = {}
    for name in SHIPPED:
        paths[name] = directory / f"{name}.urdf"
        assert cli_main(["urdf", name, "-o", str(paths[name])]) == 0
    return paths


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_robots_exported_agree_with_pinocchio(exported, name):
    yaml_model = RobotModel.named(name)
    model = RobotModel.from_urdf(exported[name], tip_link="tool0")
    text = exported[name].read_text()
    oracle = PinocchioChain(text, list(model.joint_names), "tool0", gravity=yaml_model.gravity)
    assert_matches_pinocchio(model, oracle, np.random.default_rng(1))
    # ... and the exported robot is the YAML robot, rotors and friction included.
    rng = np.random.default_rng(2)
    for _ in range(3):
        q, qd, qdd = _random_state(yaml_model, rng)
        assert relative_error(rnea(model, q, qd, qdd), rnea(yaml_model, q, qd, qdd)) <= TOLERANCE
        assert relative_error(tool_pose(model, q), tool_pose(yaml_model, q)) <= TOLERANCE


@pytest.mark.parametrize("seed", range(12))
def test_random_urdf_trees_agree_with_pinocchio(seed):
    rng = np.random.default_rng(seed)
    sample = random_urdf(rng, n=int(rng.integers(1, 8)))
    locked = {name: float(rng.uniform(*bounds)) for name, bounds in sample.lockable.items()
              if name not in sample.mimic}
    model = RobotModel.from_urdf(sample.text, tip_link=sample.tip, locked=locked)
    assert list(model.joint_names) == sample.chain
    assert list(model.joint_types) == sample.types
    # The mimic joint follows the finger it mimics (Pinocchio is given that position by hand).
    positions = dict(locked, **{joint: multiplier * locked[target] + offset
                                for joint, (target, multiplier, offset) in sample.mimic.items()})
    oracle = PinocchioChain(sample.text, sample.chain, sample.tip, positions)
    assert_matches_pinocchio(model, oracle, rng)


@pytest.mark.parametrize("seed", range(4))
def test_default_locks_at_zero(seed):
    rng = np.random.default_rng(100 + seed)
    sample = random_urdf(rng, n=5)
    model = RobotModel.from_urdf(sample.text, tip_link=sample.tip)
    oracle = PinocchioChain(sample.text, sample.chain, sample.tip)
    assert_matches_pinocchio(model, oracle, rng, trials=2)


@pytest.mark.parametrize("seed", range(4))
def test_chain_from_the_middle_of_a_tree(seed):
    """Root and tip inside the tree: the root link's frame is the world, gravity -z there."""
    rng = np.random.default_rng(200 + seed)
    sample = random_urdf(rng, n=7, special_axes=False)
    root, tip = "link2", "link6"
    model = RobotModel.from_urdf(sample.text, root_link=root, tip_link=tip)
    assert list(model.joint_names) == sample.chain[2:6]
    oracle = PinocchioChain(sample.text, sample.chain[2:6], tip, root=root)
    assert_matches_pinocchio(model, oracle, rng, trials=2)


def test_forward_kinematics_gives_the_urdf_link_frames():
    rng = np.random.default_rng(7)
    sample = random_urdf(rng, n=6)
    model = RobotModel.from_urdf(sample.text, tip_link=sample.tip)
    oracle = PinocchioChain(sample.text, sample.chain, sample.tip)
    q = _random_state(model, rng)[0]
    frames = forward_kinematics(model, q)
    pin.framesForwardKinematics(oracle.model, oracle.data, oracle.q(q))
    for i, name in enumerate(sample.chain):
        link = f"link{name.removeprefix('joint')}"
        expected = oracle.data.oMf[oracle.model.getFrameId(link)].homogeneous
        assert relative_error(frames[i + 1], expected) <= TOLERANCE


def test_continuous_joints_have_no_position_limits():
    rng = np.random.default_rng(3)
    sample = random_urdf(rng, n=4, types=("continuous",))
    model = RobotModel.from_urdf(sample.text, tip_link=sample.tip)
    assert model.joint_types == ("continuous",) * 4
    assert np.all(model.lower == -np.inf) and np.all(model.upper == np.inf)
    # Many turns away from zero: still the same dynamics as Pinocchio (which stores cos and sin).
    oracle = PinocchioChain(sample.text, sample.chain, sample.tip)
    q = np.array([20.0, -31.0, 7.5, 100.0])
    tau = rnea(model.rigid(), q, q / 10, q / 20)
    assert relative_error(tau, oracle.rnea(q, q / 10, q / 20)) <= TOLERANCE


# Rounded pi in an rpy, as vendors write it: axes 2.7e-6, 3.5e-7, 4.6e-8 and 3.6e-9 rad from
# parallel.  (joint, parent, child, type, origin xyz, rpy, axis)
_NEAR_PARALLEL = (
    ("j1", "base", "l1", "revolute", "0 0 0.3", "0 0 0", "0 0 1"),
    ("j2", "l1", "l2", "revolute", "0.1 0.05 0.2", "1.5708 0 0", "0 0 1"),
    ("j3", "l2", "l3", "revolute", "0.4 0.02 0.01", "3.14159 0 0", "0 0 1"),
    ("j4", "l3", "l4", "prismatic", "0.05 0.3 0", "3.141593 0 0.3", "0 0 1"),
    ("j5", "l4", "l5", "revolute", "0.1 0 0.2", "3.1415927 0 0", "0 0 -1"),
    ("j6", "l5", "l6", "revolute", "0.2 0.1 0", "3.14159265 0.2 0", "0 0 1"),
)


def _near_parallel_urdf(rng, joints) -> str:
    links = {"base"} | {j[2] for j in joints}
    parts = [f'<link name="{name}">{_inertial(rng)}</link>' for name in sorted(links)]
    for name, parent, child, jtype, xyz, rpy, axis in joints:
        parts.append(f'<joint name="{name}" type="{jtype}"><parent link="{parent}"/>'
                     f'<child link="{child}"/><origin xyz="{xyz}" rpy="{rpy}"/>'
                     f'<axis xyz="{axis}"/><limit lower="-1" upper="1" velocity="1" '
                     'effort="10"/></joint>')
    last = joints[-1][2]
    parts.append(f'<link name="tool"/><joint name="tool_joint" type="fixed">'
                 f'<parent link="{last}"/><child link="tool"/>'
                 '<origin xyz="0.05 0 0.1" rpy="0 0 0"/></joint>')
    return f'<robot name="near_parallel">{"".join(parts)}</robot>'


@pytest.mark.parametrize("tilted_base", [False, True])
def test_almost_parallel_axes_agree_with_pinocchio(tilted_base):
    """
    Axes 1e-6 to 1e-9 rad from parallel (rounded pi) agree with Pinocchio to TOLERANCE.

    Their common normals lie 0.1 m / 1e-9 rad = 1e5 km away; the frames before them stay at the
    joint origins and the next joints get general offsets (axes_to_dh.py), also after a prismatic
    joint and, with ``tilted_base``, where frame 0 is F_1 itself (axis 1 not the world z).
    """
    joints = list(_NEAR_PARALLEL)
    if tilted_base:         # axis 1 tilted, axis 2 almost parallel to it
        joints[0] = ("j1", "base", "l1", "revolute", "0.1 0 0.3", "0.3 0.2 0", "0 0 1")
        joints[1] = ("j2", "l1", "l2", "revolute", "0.1 0.05 0.2", "3.14159 0 0", "0 0 1")
    rng = np.random.default_rng(31 + tilted_base)
    text = _near_parallel_urdf(rng, joints)
    model = RobotModel.from_urdf(text, tip_link="tool")
    offsets = np.flatnonzero(model.dh_e)
    assert len(offsets) >= 2 and np.abs(model.chain.p_prev).max() < 2.0     # not kilometres
    oracle = PinocchioChain(text, [j[0] for j in joints], "tool")
    assert_matches_pinocchio(model, oracle, rng)
    # the same model through the other implementations: plain Python and numpy batches
    q, qd, qdd = _random_state(model, rng)
    rigid = model.rigid()
    assert relative_error(rnea(rigid, q, qd, qdd), oracle.rnea(q, qd, qdd)) <= TOLERANCE
