"""robot-dynamics demo: the bringup on a robot, driven by a small demo publisher, for a few seconds.

One process runs the bringup nodes (the same list as the launch file) and a demo node that
publishes a reference trajectory and joint states following it (100 Hz); it prints what the
inverse-dynamics and gravity-compensation nodes publish, checks the gravity torques against the
core, asks the mass-matrix service once and exits.  Everything stays on this machine
(ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST).
"""
from __future__ import annotations

import os
import sys
import tempfile
import time

import numpy as np

from ..bringup import DEFAULT_NODES, DEFAULT_ROBOT

HELP = "run the nodes on a robot with a demo publisher and show their outputs and a mass-matrix answer"
JOINT_STATE_RATE = 100.0      # Hz
START_DELAY = 0.5             # s between start-up and the start of the reference


def add_arguments(parser):
    parser.add_argument("--robot", default=DEFAULT_ROBOT, help=f"robot (default {DEFAULT_ROBOT})")
    parser.add_argument("--namespace", default="robot_dynamics", help="namespace of the nodes (default %(default)s)")
    parser.add_argument("--duration", type=float, default=5.0, help="seconds to run (default %(default)s)")
    parser.add_argument("--print-period", type=float, default=0.5, help="seconds between printed lines")


def demo_trajectory(model, duration: float):
    """Rest-to-rest quintic out-and-back motion between two poses inside the joint limits."""
    from ..core import JointTrajectory
    # Continuous joints (no position limits) move within one turn.
    lower = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    upper = np.where(np.isfinite(model.upper), model.upper, np.pi)
    mid = 0.5 * (lower + upper)
    span = upper - lower
    q0 = np.clip(np.zeros(model.n), lower + 0.1 * span, upper - 0.1 * span)
    q1 = q0 + 0.25 * span * np.sign(mid - q0 + 1e-9)
    half = max(duration / 2.0, 0.5)
    zeros = np.zeros((3, model.n))
    return JointTrajectory(model.joint_names, [0.0, half, 2 * half], [q0, q1, q0], zeros, zeros)


def _fmt(values) -> str:
    return " ".join(f"{v:9.3f}" for v in values)


def run(args) -> int:
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"      # a local demo: loopback only
    os.environ.setdefault("ROS_LOG_DIR", tempfile.mkdtemp(prefix="robot-dynamics-demo-log-"))
    import rclpy
    from robot_dynamics_interfaces.srv import GetMassMatrix, ScaleTrajectory
    from sensor_msgs.msg import JointState

    from ..bringup import Spinner, create_nodes, node_descriptions, ros_args
    from ..core import RobotDescriptionError, RobotModel, gravity_torques
    from ..core import JointTrajectory
    from ..ros_messages import seconds_to_stamp, stamp_seconds, trajectory_to_msg

    try:
        model = RobotModel.named(args.robot)
        descriptions = node_descriptions(args.robot, args.namespace, DEFAULT_NODES)
    except (RobotDescriptionError, ValueError) as exc:
        print(f"demo: {exc}", file=sys.stderr)
        return 2
    ns = descriptions[0].namespace.rstrip("/")
    duration = max(args.duration, 1.0)
    traj = demo_trajectory(model, duration - 2 * START_DELAY)

    rclpy.init(args=["robot-dynamics"] + ros_args(descriptions))
    nodes, spinner = [], None
    try:
        nodes = create_nodes(descriptions)
        demo = rclpy.create_node("demo_publisher", namespace=ns)
        nodes.append(demo)
        t_start = demo.get_clock().now().nanoseconds * 1e-9 + START_DELAY
        reference = trajectory_to_msg(traj, seconds_to_stamp(t_start))
        ref_pub = demo.create_publisher(type(reference), f"{ns}/reference_trajectory", 10)
        state_pub = demo.create_publisher(JointState, f"{ns}/joint_states", 10)
        sent = {}                                   # stamp -> q of the joint states we published

        def publish_reference():    # until the node answers (same absolute start: idempotent)
            if not received["feedforward_effort"]:
                ref_pub.publish(reference)

        def publish_state():
            now = demo.get_clock().now().nanoseconds * 1e-9
            q, qd, _ = traj.sample(now - t_start)
            q = q + 0.01 * np.sin(2.0 * np.pi * now)      # the "robot" tracks with a small error
            msg = JointState(name=list(model.joint_names), position=q.tolist(), velocity=qd.tolist())
            msg.header.stamp = seconds_to_stamp(now)
            sent[(msg.header.stamp.sec, msg.header.stamp.nanosec)] = q
            state_pub.publish(msg)

        received = {"feedforward_effort": [], "gravity_effort": []}
        demo.create_timer(1.0, publish_reference)
        demo.create_timer(1.0 / JOINT_STATE_RATE, publish_state)
        publish_reference()
        for topic, store in received.items():
            demo.create_subscription(JointState, f"{ns}/{topic}", store.append, 100)
        mass_client = demo.create_client(GetMassMatrix, f"{ns}/get_mass_matrix")
        scale_client = demo.create_client(ScaleTrajectory, f"{ns}/trajectory_scaler/scale_trajectory")

        names = model.joint_names
        print(f"robot-dynamics demo: {model.name} ({model.n} joints), nodes "
              + ", ".join(n.get_fully_qualified_name() for n in nodes[:-1])
              + f"; demo publisher: {ns}/reference_trajectory ({traj.num_points} points, {traj.duration:g} s, "
              f"starting in {START_DELAY} s) and {ns}/joint_states at {JOINT_STATE_RATE:g} Hz; {duration:g} s")
        print(f"{'t [s]':>6}  {'topic':<36}" + "".join(f"{n:>10}" for n in names) + "   [N m]")
        spinner = Spinner(nodes).start()
        t0 = time.monotonic()
        next_print = t0 + START_DELAY + args.print_period
        while time.monotonic() - t0 < duration and rclpy.ok():
            time.sleep(max(0.0, min(next_print, t0 + duration) - time.monotonic()))
            if time.monotonic() >= next_print:
                next_print += args.print_period
                t = time.monotonic() - t0
                for topic, store in received.items():
                    if store:
                        print(f"{t:6.2f}  {ns + '/' + topic:<36} {_fmt(store[-1].effort)}")

        # the gravity outputs, checked against the core at the q we sent with the same stamp
        errors = [np.abs(np.asarray(m.effort) - gravity_torques(model, sent[key])).max()
                  for m in received["gravity_effort"]
                  if (key := (m.header.stamp.sec, m.header.stamp.nanosec)) in sent]
        print(f"received {len(received['feedforward_effort'])} feedforward_effort and "
              f"{len(received['gravity_effort'])} gravity_effort messages for {len(sent)} joint states; "
              f"gravity_effort vs core g(q): max |difference| {max(errors, default=float('nan')):.2e} N m")

        def call(client, request):    # answered while the spinner runs; bounded wait
            if not client.wait_for_service(timeout_sec=5.0):
                return None
            future = client.call_async(request)
            end = time.monotonic() + 5.0
            while not future.done() and time.monotonic() < end:
                time.sleep(0.01)
            return future.result() if future.done() else None

        # The same path, ten times too fast for the actuators, re-timed by the trajectory scaler.
        fast = JointTrajectory(traj.joint_names, traj.times / 10.0, traj.positions, traj.velocities * 10.0,
                               traj.accelerations * 100.0)
        scaled = {method: call(scale_client, ScaleTrajectory.Request(trajectory=trajectory_to_msg(fast),
                                                                     method=method))
                  for method in ("uniform", "time_optimal")}
        q = traj.sample(0.5 * traj.duration)[0]
        answer = call(mass_client, GetMassMatrix.Request(position=q.tolist()))
        spinner.stop()
        print(f"\n$ ros2 service call {ns}/get_mass_matrix robot_dynamics_interfaces/srv/GetMassMatrix "
              f"\"{{position: [{', '.join(f'{v:.3f}' for v in q)}]}}\"")
        if answer is None:
            print("no answer from the mass-matrix service", file=sys.stderr)
            return 1
        print(f"success: {answer.success}  joint_names: {list(answer.joint_names)}  size: {answer.size}")
        B = np.asarray(answer.mass_matrix).reshape(answer.size, answer.size)
        print("mass_matrix [kg m^2] (row-major, shown as rows):")
        for row in B:
            print("   " + _fmt(row))
        print(f"\n$ ros2 service call {ns}/trajectory_scaler/scale_trajectory robot_dynamics_interfaces/srv/"
              f"ScaleTrajectory  # the demo path in {fast.duration:g} s instead of {traj.duration:g} s")
        for method, result in scaled.items():
            if result is None or not result.success:
                print(f"{method}: no answer" if result is None else f"{method}: {result.message}")
                continue
            print(f"{method:>12}: success, {len(result.trajectory.points)} points, duration {result.duration:.3f} s"
                  + (f" (scale factor c = {result.scale_factor:.3f})" if method == "uniform" else "")
                  + ", effort filled in for every point")
        ok = (answer.success and received["feedforward_effort"] and received["gravity_effort"]
              and all(r is not None and r.success for r in scaled.values()))
        return 0 if ok else 1
    finally:
        if spinner is not None:
            spinner.stop()
        for node in nodes:
            node.destroy_node()
        rclpy.try_shutdown()
