"""
inverse_dynamics_node over DDS; the sampling instant is each joint state's stamp, exactly.

The node runs in its own process with use_sim_time; this process publishes /clock, the reference
trajectory and joint states stamped at the instant to sample (the reference is sampled at the
stamp, whatever the node's clock when it handles the message).  The reference is a
constant-acceleration motion p(t) = p0 + v0 t + a t^2 / 2 given as quintic points (positions,
velocities, accelerations), which the interpolation reproduces exactly, so q_ref, qd_ref,
qdd_ref are known in closed form.  The node's outputs are in a configured joint order
(reversed), which the checks undo by name.

Oracles: RNEA from the core for feedforward; for computed torque B(q) from the core's composite-
rigid-body mass matrix plus n(q, qd), a different formulation from the node's single RNEA call.
"""
import numpy as np
import pytest

from ros_fixtures import *  # noqa: F401,F403
from ros_fixtures import NodeProcess, private_namespace

from robot_dynamics_ros.core import (RobotModel, gravity_torques, mass_matrix, nonlinear_effects,
                                     rnea)

from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

pytestmark = pytest.mark.ros          # starts DDS (see test/conftest.py)

MODEL = RobotModel.named("puma560")
NAMES = list(MODEL.joint_names)
OUT_NAMES = NAMES[::-1]                      # the node's configured joint order
NS = private_namespace("id")
NODE = "inverse_dynamics"
FQN = f"{NS}/{NODE}"
T0 = 100                                     # trajectory start (header stamp), sim seconds
P0 = np.array([0.1, 0.5, -0.4, 0.2, -0.3, 0.6])
V0 = np.array([0.3, -0.2, 0.25, 0.5, -0.4, 0.1])
A = np.array([-0.4, 0.6, -0.3, 0.8, 0.5, -0.7])


def p(t):
    return P0 + V0 * t + 0.5 * A * t * t


def pd(t):
    return V0 + A * t


@pytest.fixture(scope="module")
def idn(ros_env, ros_client, tmp_path_factory):
    proc = NodeProcess.node("robot_dynamics_ros.nodes.inverse_dynamics", ros_env,
                            tmp_path_factory.mktemp("id"), NODE, NS,
                            {"robot_description": "puma560", "use_sim_time": True,
                             "joint_names": OUT_NAMES, "warning_period": 0.0,
                             "input_timeout": 0.0})
    try:
        c = ros_client
        h = type("Harness", (), {})()
        h.proc, h.client = proc, c
        h.clock = c.publisher(Clock, "/clock")
        h.states = c.publisher(JointState, f"{NS}/joint_states")
        h.reference = c.publisher(JointTrajectory, f"{NS}/reference_trajectory")
        h.out = c.collect(JointState, f"{NS}/feedforward_effort")
        h.command = c.collect(Float64MultiArray, f"{NS}/effort_command")
        h.stamp = 5000
        assert c.wait_for_subscriber(h.states) and c.wait_for_subscriber(
            h.reference), proc.log_text()
        yield h
    finally:
        proc.stop()
    assert proc.proc.returncode in (0, -15), proc.log_text()


def model_order(msg_values):
    """Values of an output (configured order) back in the model order."""
    return np.asarray(msg_values)[[OUT_NAMES.index(n) for n in NAMES]]


def trajectory_msg(stamp_sec=T0, names=None, fields=("positions", "velocities", "accelerations"),
                   times=(0.0, 1.0, 2.0)):
    """Return the closed-form motion as a JointTrajectory (``names`` reorders/extends joints)."""
    names = names or NAMES
    msg = JointTrajectory()
    msg.header.stamp.sec = stamp_sec
    msg.joint_names = names
    for t in times:
        pt = JointTrajectoryPoint()
        pt.time_from_start.sec, pt.time_from_start.nanosec = int(t), int(round((t % 1) * 1e9))
        values = {"positions": p(t), "velocities": pd(t), "accelerations": A}
        for f in fields:
            by_name = dict(zip(NAMES, values[f]))
            setattr(pt, f, [float(by_name.get(n, 0.25)) for n in names])
        msg.points.append(pt)
    return msg


def clock_msg(sim_time):
    clock = Clock()
    clock.clock.sec, clock.clock.nanosec = int(sim_time), int(round((sim_time % 1) * 1e9))
    return clock


def set_reference(h, msg, clock="stamp"):
    """
    Publish a reference; return once the node has logged it (bounded).

    ``clock``: /clock published before each try ("stamp": the reference's stamp if non-zero, so
    that it does not end in the past; None: leave the node's clock as it is).
    """
    if clock == "stamp":
        clock = msg.header.stamp.sec or None
    before = len(h.client.logs_from(NODE, "new reference"))

    def publish():
        if clock is not None:
            h.clock.publish(clock_msg(clock))
        h.reference.publish(msg)
    h.client.publish_until(publish, lambda: len(
        h.client.logs_from(NODE, "new reference")) > before)
    assert len(h.client.logs_from(NODE, "new reference")) > before, h.proc.log_text()


def output_at(h, sim_time, expected_position, q=None, qd=None, names=None, clock=None):
    """
    Return the output for a joint state stamped ``sim_time``, /clock at ``clock`` (or the same).

    The joint state is published until an output with its stamp and the reference position
    ``expected_position`` comes back (only outputs that arrive during this call count).
    """
    q = P0 if q is None else q
    qd = np.zeros(6) if qd is None else qd
    names = names or NAMES
    clock = clock_msg(sim_time if clock is None else clock)
    msg = JointState()
    msg.header.stamp = clock_msg(sim_time).clock
    msg.name = names
    by_name = dict(zip(NAMES, q))
    vel = dict(zip(NAMES, qd))
    msg.position = [float(by_name[n]) for n in names]
    msg.velocity = [float(vel[n]) for n in names]
    first = len(h.out.messages)

    def publish():
        h.clock.publish(clock)
        h.states.publish(msg)

    def found():
        for m in reversed(h.out.messages[first:]):
            if m.header.stamp == msg.header.stamp and np.allclose(
                    model_order(m.position), expected_position, atol=1e-12):
                return m
        return None
    out = h.client.publish_until(publish, found)
    assert out is not None, (h.out.messages[-1:], h.proc.log_text())
    return out


def test_feedforward_is_rnea_of_the_sampled_reference(idn):
    names = ["gripper"] + NAMES[::-1] + ["camera_pan"]          # superset, other order
    set_reference(idn, trajectory_msg(names=names))
    t = 0.7
    out = output_at(idn, T0 + t, p(t), names=[NAMES[i] for i in (3, 1, 0, 5, 4, 2)])
    assert list(out.name) == OUT_NAMES
    np.testing.assert_allclose(model_order(out.velocity), pd(t), atol=1e-12)
    expected = rnea(MODEL, p(t), pd(t), A)
    np.testing.assert_allclose(model_order(out.effort), expected, rtol=1e-9, atol=1e-9)
    assert idn.client.spin_until(lambda: any(np.allclose(c.data, out.effort)
                                 for c in idn.command.messages))
    assert (out.header.stamp.sec, out.header.stamp.nanosec) == (T0, 700_000_000)   # the input's


def test_sampled_at_the_joint_state_stamp_whatever_the_clock(idn):
    """
    The reference is sampled at the joint state's stamp, not at the node's clock on handling it.

    /clock 0.3 s ahead of the stamp is what a node gets to see when it handles a joint state
    played from a bag late, after the player's clock has moved on (a loaded machine; the online
    outputs then differed from ``bag process``); behind it, a clock that has not caught up yet.
    """
    set_reference(idn, trajectory_msg())
    for t, clock in ((0.5, 0.8), (0.9, 0.6)):
        out = output_at(idn, T0 + t, p(t), clock=T0 + clock)
        np.testing.assert_allclose(model_order(out.velocity), pd(t), atol=1e-12)
        np.testing.assert_allclose(model_order(out.effort), rnea(MODEL, p(t), pd(t), A),
                                   rtol=1e-9, atol=1e-9)
    out = output_at(idn, 0.0, p(0.7), clock=T0 + 0.7)    # stamped zero: at the node's clock
    np.testing.assert_allclose(model_order(out.velocity), pd(0.7), atol=1e-12)


def test_after_the_end_the_last_point_as_given(idn):
    """
    JTC, once "the whole animation has played out", keeps the last point as given.

    Its velocity and acceleration too; a reference that ends at rest then holds its end with the
    gravity torques.
    """
    set_reference(idn, trajectory_msg())
    out = output_at(idn, T0 + 5.0, p(2.0))
    np.testing.assert_allclose(model_order(out.velocity), pd(2.0), atol=1e-12)
    np.testing.assert_allclose(model_order(out.effort), rnea(
        MODEL, p(2.0), pd(2.0), A), rtol=1e-9, atol=1e-9)
    at_rest = trajectory_msg(fields=("positions",), times=(0.0, 2.0))
    set_reference(idn, at_rest)
    out = output_at(idn, T0 + 6.0, p(2.0))
    np.testing.assert_allclose(model_order(out.velocity), 0.0, atol=0)
    np.testing.assert_allclose(model_order(out.effort), gravity_torques(
        MODEL, p(2.0)), rtol=1e-9, atol=1e-9)


def test_zero_stamp_starts_on_receipt(idn):
    set_reference(idn, trajectory_msg())
    # node clock and joint states now at T0 + 50 (old reference held)
    output_at(idn, T0 + 50.0, p(2.0))
    set_reference(idn, trajectory_msg(stamp_sec=0))       # starts at the first sample: t = 0
    out = output_at(idn, T0 + 50.0, P0)
    np.testing.assert_allclose(model_order(out.velocity), V0, atol=1e-12)   # inside, moving
    np.testing.assert_allclose(model_order(out.effort), rnea(
        MODEL, P0, V0, A), rtol=1e-9, atol=1e-9)


def test_before_the_first_point_it_moves_from_the_measured_state_like_jtc(idn):
    """
    Before the first point is due, JTC (Trajectory::sample) interpolates from the measured state.

    Cubic Hermite from (q, qd) measured at the first sample to (p, v) of the first point.
    Oracle: scipy's CubicHermiteSpline.  A clock going back before that first sample gives
    nothing.
    """
    from scipy.interpolate import CubicHermiteSpline
    c = idn.client
    set_reference(idn, trajectory_msg(stamp_sec=T0 + 19))
    output_at(idn, T0 + 20.0, p(1.0))                     # joint states and clock at T0 + 20
    # due at T0 + 21 + 0.5: 1.5 s after the first sample, which happens at T0 + 20
    set_reference(idn, trajectory_msg(stamp_sec=T0 + 21, times=(0.5, 1.5, 2.5)), clock=None)
    q_b, qd_b = P0 + np.array([0.2, -0.1, 0.15, -0.3, 0.1, 0.05]
                              ), np.array([0.4, 0.1, -0.3, 0.0, 0.2, -0.1])
    approach = CubicHermiteSpline([0.0, 1.5], [q_b, p(0.5)], [qd_b, pd(0.5)])
    for dt in (0.0, 0.9):
        out = output_at(idn, T0 + 20.0 + dt, approach(dt), q=q_b, qd=qd_b)
        np.testing.assert_allclose(model_order(out.velocity), approach(dt, 1), atol=1e-9)
        np.testing.assert_allclose(model_order(out.effort),
                                   rnea(MODEL, approach(dt), approach(dt, 1), approach(dt, 2)),
                                   rtol=1e-9, atol=1e-9)
    assert not np.allclose(approach(0.0, 2), 0.0)         # really accelerating, not holding
    out = output_at(idn, T0 + 22.0, p(1.0), q=q_b, qd=qd_b)    # then the trajectory itself
    np.testing.assert_allclose(model_order(out.effort), rnea(
        MODEL, p(1.0), pd(1.0), A), rtol=1e-9, atol=1e-9)
    # the clock goes back before the first sample (a simulator reset): rejected, nothing published;
    # a joint state stamped zero is sampled at the node's clock, one stamped later at its stamp
    before = len(idn.out.messages)
    state = JointState(name=NAMES, position=q_b.tolist(), velocity=qd_b.tolist())
    c.publish_until(lambda: (idn.clock.publish(clock_msg(T0 + 10.0)), idn.states.publish(state)),
                    lambda: c.logs_from(NODE, "clock went back"))
    went_back = len(c.logs_from(NODE, "clock went back"))
    assert went_back, idn.proc.log_text()
    for k in range(3):                                    # stamped before the first sample
        state.header.stamp.sec = T0 + 11 + k
        idn.states.publish(state)
    assert c.spin_until(lambda: len(c.logs_from(NODE, "clock went back")) >= went_back + 3)
    assert idn.out.messages[before:] == []


def test_positions_only_is_linear(idn):
    set_reference(idn, trajectory_msg(fields=("positions",), times=(0.0, 2.0)))
    slope = (p(2.0) - p(0.0)) / 2.0
    out = output_at(idn, T0 + 0.5, P0 + 0.5 * slope)
    np.testing.assert_allclose(model_order(out.velocity), slope, atol=1e-12)
    np.testing.assert_allclose(model_order(out.effort),
                               rnea(MODEL, P0 + 0.5 * slope, slope, np.zeros(6)),
                               rtol=1e-9, atol=1e-9)


def test_computed_torque_mode_and_gain_parameters(idn):
    c = idn.client
    kp_model = np.array([50.0, 60.0, 70.0, 80.0, 90.0, 100.0])
    kd_model = np.array([5.0, 6.0, 7.0, 8.0, 9.0, 10.0])
    to_cfg = [NAMES.index(n) for n in OUT_NAMES]
    # bad values are refused with a reason; nothing changes
    for values, reason in [({"kp": [1.0] * 5}, "kp: expected 6 gains"),
                           ({"kd": [1.0, -2.0, 1.0, 1.0, 1.0, 1.0]},
                            "kd[1]: -2.0 is outside [0, 10000]"),
                           ({"mode": "impedance"}, "mode: 'impedance' is not one of")]:
        result, = c.set_parameters(FQN, values)
        assert not result.successful and reason in result.reason, (values, result.reason)
    results = c.set_parameters(FQN, {"mode": "computed_torque", "kp": kp_model[to_cfg].tolist(),
                                     "kd": kd_model[to_cfg].tolist()})
    assert all(r.successful for r in results), results
    try:
        set_reference(idn, trajectory_msg())
        t = 1.3
        q = p(t) + np.array([0.02, -0.01, 0.03, -0.02, 0.01, 0.05])
        qd = pd(t) + np.array([-0.1, 0.05, 0.2, -0.05, 0.1, 0.0])
        out = output_at(idn, T0 + t, p(t), q=q, qd=qd)
        y = A + kd_model * (pd(t) - qd) + kp_model * (p(t) - q)
        expected = mass_matrix(MODEL, q) @ y + nonlinear_effects(MODEL, q, qd)
        np.testing.assert_allclose(model_order(out.effort), expected, rtol=1e-9, atol=1e-9)
        assert not np.allclose(expected, rnea(MODEL, p(t), pd(t), A), atol=1e-2)   # feedback acts
        # computed torque needs velocities: a message without them is rejected, with the reason
        msg = JointState()
        msg.header.stamp.sec = 1
        msg.name, msg.position = NAMES, q.tolist()
        c.publish_until(lambda: idn.states.publish(msg), lambda: c.logs_from(NODE, "no velocity"))
        assert c.logs_from(NODE, "no velocity")
        assert not [m for m in idn.out.messages if m.header.stamp.sec == 1]
    finally:
        c.set_parameters(FQN, {"mode": "feedforward"})


@pytest.mark.parametrize("mutate, reason", [
    (lambda m: m.points[2].time_from_start.__setattr__("sec", 1), "strictly increasing"),
    (lambda m: m.points[1].positions.__setitem__(2, float("nan")),
     "positions of joint 'joint3' at point 1 is nan"),
    # values no robot takes (fuzzing found them accepted, then every joint state refused): the
    # checks of joint_states, before the reference replaces the old one
    (lambda m: m.points[1].positions.__setitem__(0, 1e308),
     "positions of joint 'joint1' at point 1 is 1e+308, beyond 1e+06"),
    (lambda m: m.points[0].positions.__setitem__(4, 2e6),
     "positions of joint 'joint5' at point 0 is 2e+06, beyond 1e+06"),
    (lambda m: m.points[1].velocities.__setitem__(1, -3e6) if m.points[1].velocities else
     m.points[1].positions.__setitem__(1, -3e6), "of joint 'joint2' at point 1 is -3e+06"),
    (lambda m: m.points[1].velocities.pop(), "point 1 has 5 velocities for 6 joints"),
    (lambda m: m.joint_names.__setitem__(5, "wrist"), "missing joint(s) ['joint6']"),
    (lambda m: m.header.stamp.__setattr__("sec", T0 - 10), "ends in the past"),   # as JTC
])
def test_bad_reference_is_rejected_and_the_old_one_kept(idn, mutate, reason):
    set_reference(idn, trajectory_msg())
    bad = trajectory_msg()
    bad.points = list(bad.points)
    for pt in bad.points:
        pt.positions, pt.velocities = list(pt.positions), list(pt.velocities)
    bad.joint_names = list(bad.joint_names)
    mutate(bad)
    c = idn.client
    c.publish_until(lambda: idn.reference.publish(bad), lambda: c.logs_from(NODE, reason))
    assert c.logs_from(NODE, reason), idn.proc.log_text()
    out = output_at(idn, T0 + 0.4, p(0.4))               # still the good reference
    np.testing.assert_allclose(model_order(out.effort), rnea(
        MODEL, p(0.4), pd(0.4), A), rtol=1e-9, atol=1e-9)
    assert idn.proc.alive()


def test_empty_trajectory_clears_the_reference(idn):
    c = idn.client
    set_reference(idn, trajectory_msg())
    c.publish_until(lambda: idn.reference.publish(JointTrajectory()),
                    lambda: c.logs_from(NODE, "reference cleared"))
    before = len(idn.out.messages)
    for _ in range(5):
        msg = JointState()
        idn.stamp += 1
        msg.header.stamp.sec = idn.stamp
        msg.name, msg.position = NAMES, P0.tolist()
        idn.states.publish(msg)
        c.spin_for(0.05)
    assert c.spin_until(lambda: c.logs_from(NODE, "waiting for a reference_trajectory"))
    assert len(idn.out.messages) == before
    set_reference(idn, trajectory_msg())
    output_at(idn, T0 + 0.4, p(0.4))                      # and a new one starts it again
