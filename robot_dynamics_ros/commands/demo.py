"""
robot-dynamics demo: computed-torque tracking of the simulated robot, wired as a real stack.

The bringup's nodes (the launch file's node list, all in one process) close the loop through the
simulator node, the stand-in for ros2_control: ``dynamics_simulator_node`` publishes
``/joint_states`` (as joint_state_broadcaster does) and takes its torques from
``/effort_controller/commands`` (a JointGroupEffortController's topic), where inverse_dynamics in
``computed_torque`` mode sends them; gravity_compensation watches the same joint states.  The
simulator runs as fast as the loop allows (lockstep: one controller answer per step) and
publishes ``/clock``, the nodes use it (``use_sim_time``), so the run and its tracking error are
the same on a loaded machine.  A recorder in the same process writes a bag of the run (joint
states, reference, the nodes' outputs, the effort command; simulated time) and, once the run is
over, writes every message still queued for it before closing the bag (a loaded machine leaves
the recorder far behind the lockstep loop); the demo prints what the nodes publish, the
tracking error against the core's sampling of the reference, the gravity torques against the
core, a mass-matrix answer and a re-timed trajectory.  Everything
stays on this machine (ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST).
"""
from __future__ import annotations

import bisect
import os
import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..core.trajectories.demo import demo_trajectory
from ..nodes.bringup import DEFAULT_NAMESPACE, DEFAULT_ROBOT
from .bringup import add_topic_arguments, topic_values

HELP = ("computed-torque tracking of the simulated robot through the nodes, printing what they "
        "publish and the tracking error, and writing a bag of the run")
NODES = ("inverse_dynamics", "gravity_compensation", "dynamics_service", "trajectory_scaler")
# Wired as a ros2_control stack: the simulator stands in for joint_state_broadcaster (which
# publishes /joint_states) and a JointGroupEffortController named effort_controller.
TOPICS = {"joint_states": "/joint_states", "effort_command": "/effort_controller/commands"}
RATE = 1000.0                   # Hz: integration steps of the simulator
SETTLE = 0.5                    # s of simulated time after the reference ends
STALL_TIMEOUT = 60.0            # s of wall clock without a new joint state: give up
RECORDED = ("joint_states", "effort_command", "reference_trajectory", "feedforward_effort",
            "gravity_effort", "scaled_trajectory")


def add_arguments(parser):
    """Add the demo's options (and the launch file's topic arguments)."""
    parser.add_argument("--robot", default=DEFAULT_ROBOT,
                        help=f"shipped robot name or robot file (default {DEFAULT_ROBOT})")
    parser.add_argument("--namespace", default=DEFAULT_NAMESPACE,
                        help="namespace of the nodes (default %(default)s)")
    parser.add_argument("--duration", type=float, default=4.0,
                        help="seconds of the reference trajectory (simulated time; the run "
                             f"goes on {SETTLE:g} s longer) (default %(default)s)")
    parser.add_argument("--control-rate", type=float, default=500.0,
                        help="joint states per simulated second, each answered by the "
                             "controller (a divisor of the 1 kHz integration) "
                             "(default %(default)s)")
    parser.add_argument("--print-period", type=float, default=0.5,
                        help="simulated seconds between printed samples (default %(default)s)")
    parser.add_argument("--bag", default=None,
                        help="bag directory to write (new; default ./demo_bag_<date>_<time>)")
    parser.add_argument("--storage", default="mcap", choices=("mcap", "sqlite3"),
                        help="bag storage (default %(default)s)")
    parser.add_argument("--without-friction", action="store_true",
                        help="simulate and control the robot without its friction")
    parser.add_argument("--plot", default=None, metavar="PNG",
                        help="also draw the reference, the joint positions and the tracking "
                             "error over time into this PNG file")
    add_topic_arguments(parser, TOPICS)


def _fmt(values) -> str:
    return " ".join(f"{v:9.4f}" for v in values)


def _stamp_ns(msg) -> int:
    return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec


class Monitor:
    """What the demo watches, by stamp: joint states and the two effort outputs."""

    def __init__(self):
        self.stamps: list[int] = []             # joint-state stamps in arrival (= time) order
        self.position: dict[int, list] = {}
        self.feedforward: dict[int, object] = {}
        self.gravity: dict[int, list] = {}
        self.received = {"joint_states": 0, "feedforward_effort": 0, "gravity_effort": 0}
        self.arrived = time.monotonic()

    def on_joint_state(self, msg):
        stamp = _stamp_ns(msg)
        if stamp not in self.position:
            self.stamps.append(stamp)
        self.position[stamp] = list(msg.position)
        self.received["joint_states"] += 1
        self.arrived = time.monotonic()

    def on_feedforward(self, msg):
        self.feedforward[_stamp_ns(msg)] = msg
        self.received["feedforward_effort"] += 1

    def on_gravity(self, msg):
        self.gravity[_stamp_ns(msg)] = list(msg.effort)
        self.received["gravity_effort"] += 1

    def answered(self, published: int) -> bool:
        """Tell whether all ``published`` joint states are in and both nodes answered each."""
        return self.received["joint_states"] >= published and all(
            s in self.feedforward and s in self.gravity for s in self.stamps)

    def latest(self) -> int:
        return self.stamps[-1] if self.stamps else -1

    def at_or_after(self, stamp: int) -> int | None:
        """Return the first joint-state stamp >= ``stamp`` whose outputs have arrived."""
        i = bisect.bisect_left(self.stamps, stamp)
        if i == len(self.stamps):
            return None
        found = self.stamps[i]
        complete = found in self.feedforward and found in self.gravity
        return found if complete or self.latest() > found + 50_000_000 else None


def _without_friction_file(model, directory: Path) -> str:
    """Write ``model`` without friction as a robot file for the nodes; return its path."""
    import yaml
    path = directory / f"{model.name}_without_friction.yaml"
    path.write_text(yaml.safe_dump(model.without_friction().to_dict()))
    return str(path)


def run(args) -> int:
    """Run the closed loop, print what happens, write the bag; 0 when everything answered."""
    started = time.monotonic()
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"      # a local demo: loopback only
    work = Path(tempfile.mkdtemp(prefix="robot-dynamics-demo-"))
    os.environ.setdefault("ROS_LOG_DIR", str(work / "log"))
    from ..bags.interrupt import stop_on_signals
    from ..bags.storage import check_output
    from ..nodes.bringup import node_descriptions
    from ..core import RobotModel

    if not args.duration > 0.0 or not args.print_period > 0.0:
        print("demo: --duration and --print-period must be > 0", file=sys.stderr)
        return 2
    if not 0.0 < args.control_rate <= RATE or (RATE / args.control_rate) % 1.0:
        print(f"demo: --control-rate must divide {RATE:g} Hz, got {args.control_rate:g}",
              file=sys.stderr)
        return 2
    model = RobotModel.from_description(args.robot)
    robot = args.robot
    if args.without_friction:                   # the plant and the controller's model
        robot, model = _without_friction_file(model, work), model.without_friction()
    bag = Path(args.bag or time.strftime("demo_bag_%Y%m%d_%H%M%S"))
    check_output(bag, overwrite=False)                  # before anything starts
    traj = demo_trajectory(model, args.duration)
    topics = topic_values(args)
    try:
        descriptions = node_descriptions(robot, args.namespace, NODES + ("simulator",),
                                         use_sim_time=True, topics=topics)
    except ValueError as exc:
        print(f"demo: {exc}", file=sys.stderr)
        return 2
    own = {"inverse_dynamics": {"mode": "computed_torque"},
           "simulator": {"rate": RATE, "publish_rate": float(args.control_rate),
                         "real_time_factor": 0.0,
                         "lockstep": True, "hold_until_command": True, "command_timeout": 1.0,
                         "initial_position": [float(x) for x in traj.positions[0]]}}
    # (input_timeout 0: simulated time stands still while the arm is held at the start)
    common = {"qos_depth": 1000, "input_timeout": 0.0}
    descriptions = [replace(d, parameters={**d.parameters, **common, **own.get(d.kind, {})})
                    for d in descriptions]
    stop = threading.Event()
    with stop_on_signals(stop):      # Ctrl-C ends the run between messages; the bag is closed
        code = _run(args, model, traj, descriptions, bag, stop)
    print(f"demo: {time.monotonic() - started:.1f} s in all, exit code {code}")
    return code


def _run(args, model, traj, descriptions, bag: Path, stop: threading.Event) -> int:
    import rclpy
    from rclpy.signals import SignalHandlerOptions

    from ..bags.record import QOS_DEPTH, Recorder, RecorderThread
    from ..bags.storage import RECORD_FLUSH_PERIOD, output_bag
    from ..nodes.bringup import Spinner, create_nodes, ros_args

    controllers, simulator = descriptions[:-1], descriptions[-1:]
    rclpy.init(args=["robot-dynamics"] + ros_args(descriptions),
               signal_handler_options=SignalHandlerOptions.NO)
    nodes, spinners, recorder_node, recording = [], [], None, None
    try:
        nodes = create_nodes(controllers)
        sim_time = [rclpy.parameter.Parameter("use_sim_time", value=True)]
        demo, recorder_node = (
            rclpy.create_node(name, namespace=controllers[0].namespace,
                              parameter_overrides=sim_time, start_parameter_services=False)
            for name in ("demo", "demo_recorder"))
        nodes.append(demo)
        # queues as deep as the run is long: a subscriber starved by a loaded machine catches
        # up later instead of dropping the oldest messages
        depth = QOS_DEPTH + round((traj.duration + SETTLE) * args.control_rate)
        monitor, reference_publisher = _wire_demo_node(demo, controllers[0], depth)
        with output_bag(bag, args.storage, flush_period=RECORD_FLUSH_PERIOD) as writer:
            recorder = Recorder(recorder_node, writer, [
                _resolved(controllers[0], name) for name in RECORDED], depth)
            recorder.discover()
            # joint states recorded from the simulator's first message: subscribed (and so
            # matched, which the simulator waits for) before its publisher exists
            recorder.expect(_resolved(controllers[0], "joint_states"),
                            "sensor_msgs/msg/JointState", _reliable(depth))
            # the recorder on its own thread (RecorderThread), not behind the nodes' callbacks
            recording = RecorderThread(recorder, rclpy.get_default_context()).start()
            spinners.append(Spinner(nodes).start())
            _print_header(args, model, traj, controllers[0], bag)
            if not _deliver_reference(demo, reference_publisher, traj, stop):
                return 1
            # the simulator last: it holds the arm at the start until the controller answers
            nodes += create_nodes(simulator)
            spinners.append(Spinner(nodes[-1:]).start())
            wall = _follow(args, model, traj, monitor, stop)
            spinners.pop().stop()                   # the simulation ends here
            simulator_node = nodes.pop()
            simulator_node.destroy_node()           # (its thread has stopped publishing)
            answered = stop.is_set() or _services(demo, controllers[0], traj, stop)
            complete = _finish_recording(monitor, recorder, simulator_node.published,
                                         controllers[0], (spinners.pop(), recording), stop)
        reported = _report(model, traj, monitor, controllers[0], bag, wall, stop.is_set(),
                           args.plot)
        return 130 if stop.is_set() else 0 if reported and answered and complete else 1
    finally:
        for spinner in spinners + ([recording] if recording else []):
            spinner.stop()
        for node in reversed(nodes + ([recorder_node] if recorder_node else [])):
            node.destroy_node()
        rclpy.try_shutdown()


def _reliable(depth: int):
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    return QoSProfile(depth=depth, reliability=ReliabilityPolicy.RELIABLE)


def _finish_recording(monitor: Monitor, recorder, published: int, description, threads,
                      stop) -> bool:
    """
    Let the nodes answer every joint state, stop them, write all they published; False if not.

    The simulator published ``published`` joint states; the nodes answer each (the demo's own
    subscription sees them).  Then the spinner and the recorder's thread (``threads``) stop and
    the recorder drains its subscriptions
    of what it has not written yet, expecting as many messages as the demo saw: on a loaded
    machine it runs behind the loop (once ~80 messages per topic at the end of the run).
    """
    quiet_since, seen = time.monotonic(), -1
    while not stop.is_set() and not monitor.answered(published):
        if sum(monitor.received.values()) != seen:
            quiet_since, seen = time.monotonic(), sum(monitor.received.values())
        if time.monotonic() - quiet_since > STALL_TIMEOUT:
            print(f"demo: the nodes did not answer every joint state in {STALL_TIMEOUT:g} s",
                  file=sys.stderr)
            break
        time.sleep(0.02)
    for thread in threads:                      # the nodes' spinner, the recorder's thread
        thread.stop()
    received = dict(monitor.received, effort_command=monitor.received["feedforward_effort"])
    expected = {_resolved(description, name): count for name, count in received.items()}
    expected[_resolved(description, "joint_states")] = published
    missing = recorder.drain(expected, timeout=0.0 if stop.is_set() else STALL_TIMEOUT)
    recorder.stop()
    for topic, count in missing.items():
        print(f"demo: the bag misses {count} of the {expected[topic]} messages published on "
              f"{topic}", file=sys.stderr)
    return stop.is_set() or (monitor.answered(published) and not missing)


def _resolved(description, name: str) -> str:
    """Return the absolute topic of the nodes' relative ``name`` under the demo's wiring."""
    remapped = dict(description.remappings).get(name, name)
    return remapped if remapped.startswith("/") else \
        f"{description.namespace.rstrip('/')}/{remapped}"


def _wire_demo_node(demo, description, depth: int):
    """Subscribe the demo node to what it prints; return (Monitor, reference publisher)."""
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg
    monitor = Monitor()
    qos = QoSProfile(depth=depth, reliability=ReliabilityPolicy.RELIABLE)
    for name, callback in (("joint_states", monitor.on_joint_state),
                           ("feedforward_effort", monitor.on_feedforward),
                           ("gravity_effort", monitor.on_gravity)):
        demo.create_subscription(JointState, _resolved(description, name), callback, qos)
    publisher = demo.create_publisher(JointTrajectoryMsg,
                                      _resolved(description, "reference_trajectory"), 10)
    return monitor, publisher


def _print_header(args, model, traj, description, bag: Path):
    ns = description.namespace.rstrip("/")
    joint_states = _resolved(description, "joint_states")
    command = _resolved(description, "effort_command")
    friction = "without friction" if args.without_friction else \
        "as shipped, friction included"
    print(f"robot-dynamics demo: computed-torque tracking on the simulated {model.name} "
          f"({model.n} joints, {friction})")
    print(f"  plant       {ns}/simulator: {RATE:g} Hz RK4, joint states at "
          f"{args.control_rate:g} Hz, lockstep with its controller, /clock (as fast as the loop "
          "runs)")
    print(f"  controller  {ns}/inverse_dynamics: computed_torque (Kp 100, Kd 20), use_sim_time")
    print(f"  wiring      simulator -> {joint_states} -> inverse_dynamics, gravity_compensation;"
          f" inverse_dynamics -> {command} -> simulator")
    print(f"  reference   {ns}/reference_trajectory: quintic out and back, {traj.duration:g} s"
          f" ({traj.num_points} points), then {SETTLE:g} s holding the last point")
    print(f"  bag         {bag} ({args.storage}), written as the run goes")
    header = "".join(f"{n:>10}" for n in model.joint_names)
    print(f"\n{'t [s]':>7}  {'signal':<44}{header}")


def _deliver_reference(demo, publisher, traj, stop) -> bool:
    """Publish the reference once inverse_dynamics, the scaler and the recorder listen."""
    from ..messages.ros import trajectory_to_msg
    end = time.monotonic() + 30.0
    while publisher.get_subscription_count() < 3 and not stop.is_set():
        if time.monotonic() > end:
            print("demo: nobody subscribed to the reference trajectory in 30 s", file=sys.stderr)
            return False
        time.sleep(0.02)
    time.sleep(0.2)                     # let the other side finish matching too
    publisher.publish(trajectory_to_msg(traj))  # stamp 0: starts at the first joint state
    return not stop.is_set()


def _follow(args, model, traj, monitor: Monitor, stop) -> float:
    """Print samples until the simulated run is over; return the wall-clock seconds it took."""
    end_ns = round((traj.duration + SETTLE) * 1e9)
    period_ns = round(args.print_period * 1e9)
    next_print, started = 0, None
    while not stop.is_set():
        time.sleep(0.02)
        if started is None and monitor.stamps:
            started = time.monotonic()
        while next_print <= end_ns and (stamp := monitor.at_or_after(next_print)) is not None:
            _print_sample(model, traj, monitor, stamp)
            next_print += period_ns
        if monitor.latest() >= end_ns and next_print > end_ns:
            break
        if time.monotonic() - monitor.arrived > STALL_TIMEOUT:
            print(f"demo: no joint state for {STALL_TIMEOUT:g} s: stopping", file=sys.stderr)
            break
    return time.monotonic() - (started or time.monotonic())


def _print_sample(model, traj, monitor: Monitor, stamp: int):
    t = stamp * 1e-9
    q = monitor.position[stamp]
    feedforward = monitor.feedforward.get(stamp)
    gravity = monitor.gravity.get(stamp)
    rows = [("/joint_states position [rad]", q),
            ("reference position [rad] (core)", traj.sample(t)[0])]
    if feedforward is not None:
        rows.append(("inverse_dynamics: feedforward_effort [N m]", feedforward.effort))
    if gravity is not None:
        rows.append(("gravity_compensation: gravity_effort [N m]", gravity))
    for k, (label, values) in enumerate(rows):
        print(f"{t:7.3f}  " if k == 0 else " " * 9, end="")
        print(f"{label:<44}{_fmt(values)}")


def _services(demo, description, traj, stop) -> bool:
    """Ask the mass matrix at mid-path and have the scaler re-time a too-fast path; print them."""
    from robot_dynamics_interfaces.srv import GetMassMatrix, ScaleTrajectory

    from ..core import JointTrajectory
    from ..messages.ros import trajectory_to_msg
    ns = description.namespace.rstrip("/")

    def call(client, request):          # answered while the spinner runs; bounded waits
        if stop.is_set() or not client.wait_for_service(timeout_sec=10.0):
            return None
        future = client.call_async(request)
        end = time.monotonic() + 30.0
        while not future.done() and time.monotonic() < end and not stop.is_set():
            time.sleep(0.01)
        return future.result() if future.done() else None

    q = traj.sample(0.5 * traj.duration)[0]
    answer = call(demo.create_client(GetMassMatrix, f"{ns}/get_mass_matrix"),
                  GetMassMatrix.Request(position=q.tolist()))
    print(f"\n$ ros2 service call {ns}/get_mass_matrix robot_dynamics_interfaces/srv/"
          f"GetMassMatrix \"{{position: [{', '.join(f'{v:.3f}' for v in q)}]}}\"")
    if answer is None or not answer.success:
        print("no answer from the mass-matrix service" if answer is None else answer.message)
        return False
    print(f"success: {answer.success}  joint_names: {list(answer.joint_names)}  "
          f"size: {answer.size}")
    print("mass_matrix [kg m^2] (row-major, shown as rows):")
    for row in np.asarray(answer.mass_matrix).reshape(answer.size, answer.size):
        print("   " + " ".join(f"{v:9.3f}" for v in row))
    # The same path, ten times too fast for the actuators, re-timed by the trajectory scaler.
    fast = JointTrajectory(traj.joint_names, traj.times / 10.0, traj.positions,
                           traj.velocities * 10.0, traj.accelerations * 100.0)
    client = demo.create_client(ScaleTrajectory, f"{ns}/trajectory_scaler/scale_trajectory")
    print(f"\n$ ros2 service call {ns}/trajectory_scaler/scale_trajectory robot_dynamics_"
          f"interfaces/srv/ScaleTrajectory  # the demo path in {fast.duration:g} s instead of "
          f"{traj.duration:g} s")
    # (method time_optimal takes seconds here: `robot-dynamics scale` shows it)
    result = call(client, ScaleTrajectory.Request(trajectory=trajectory_to_msg(fast),
                                                  method="uniform"))
    if result is None or not result.success:
        print("uniform: " + ("no answer" if result is None else result.message))
        return False
    print(f"uniform: success, {len(result.trajectory.points)} points, duration "
          f"{result.duration:.3f} s (scale factor c = {result.scale_factor:.3f}), effort filled "
          "in for every point")
    return True


def tracking_error(traj, stamps_ns, positions):
    """Return |q_ref(t) - q| per joint state (N, n), the reference sampled by the core at t."""
    q_ref, _, _ = traj.sample(np.asarray(stamps_ns) * 1e-9)
    return np.abs(q_ref - np.asarray(positions))


def _report(model, traj, monitor: Monitor, description, bag: Path, wall: float,
            interrupted: bool, plot: str | None = None) -> bool:
    """Print the tracking error, the gravity check and the bag's contents from the bag."""
    from ..bags import bag_info, load_joint_states
    from ..core import gravity_torques
    states = load_joint_states(bag, _resolved(description, "joint_states"),
                               joint_names=model.joint_names)
    stamps, first = np.unique(states.stamp, return_index=True)   # (the held start repeats t=0)
    if stamps.size == 0:
        print(f"\nno joint states in {bag}", file=sys.stderr)
        return False
    error = tracking_error(traj, stamps, states.position[first])
    worst = np.unravel_index(np.argmax(error), error.shape)
    simulated = stamps[-1] * 1e-9
    print(f"\nsimulated {simulated:.3f} s ({stamps.size} joint states) in "
          f"{wall:.1f} s of wall clock (real-time factor {simulated / max(wall, 1e-9):.2f})"
          + ("; interrupted by Ctrl-C" if interrupted else ""))
    print(f"tracking error |q_ref(t) - q(t)| (reference sampled by the core at each joint "
          f"state's stamp): max {error.max():.2e} rad ({model.joint_names[worst[1]]}, t = "
          f"{stamps[worst[0]] * 1e-9:.3f} s), RMS {np.sqrt(np.mean(error ** 2)):.2e} rad")
    if plot:
        plot_tracking(plot, model, traj, stamps, states.position[first], error)
    if np.any(model.coulomb > 0.0):
        print(f"  (the robot's Coulomb friction, up to {model.coulomb.max():.1f} N m, is "
              "compensated at the measured velocity: at each start\n   from rest the "
              "controller cannot know the direction of breakaway, so the arm lags until the "
              "feedback\n   builds up; with --without-friction it tracks to below 1e-3 rad)")
    checked = [np.abs(np.asarray(g) - gravity_torques(model, monitor.position[s])).max()
               for s, g in list(monitor.gravity.items()) if s in monitor.position]
    print(f"gravity_effort vs core g(q) at the same stamp: max |difference| "
          f"{max(checked, default=float('nan')):.2e} N m ({len(checked)} messages)")
    info = bag_info(bag)
    counts = ", ".join(f"{t.name} {t.count}" for t in sorted(info.topics, key=lambda t: t.name))
    print(f"\nbag {bag} ({info.storage}, {info.size_bytes / 1024:.0f} KiB, {info.duration:.3f} s"
          f" of simulated time): {counts}")
    print(f"inspect it:  robot-dynamics bag info {bag}   (replay: robot-dynamics bag play {bag} "
          "--clock)")
    return bool(checked) and not interrupted


def plot_tracking(path, model, traj, stamps_ns, positions, error) -> None:
    """Draw q_ref and q per joint, and |q_ref - q| on a log scale, against simulated time."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    t = np.asarray(stamps_ns) * 1e-9
    q_ref, _, _ = traj.sample(t)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7.5, 5.5), sharex=True)
    for j, name in enumerate(model.joint_names):
        line, = top.plot(t, positions[:, j], lw=1.2, label=name)
        top.plot(t, q_ref[:, j], ls=":", color=line.get_color(), lw=1.0)
        bottom.semilogy(t, np.maximum(error[:, j], 1e-9), lw=1.0, color=line.get_color())
    top.set_ylabel("q (solid), q_ref (dotted) [rad]")
    top.legend(fontsize=7, ncol=min(model.n, 4), loc="best")
    bottom.set_ylabel("|q_ref - q| [rad]")
    bottom.set_xlabel("simulated time [s]")
    top.set_title(f"{model.name}: computed-torque tracking in the demo (Kp 100, Kd 20)",
                  fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    print(f"wrote {path}")
