"""
Test support for the ROS integration tests: a private ROS environment, node processes, a client.

* :func:`ros_environment` -- the environment every DDS process of a test session gets:
  ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` (loopback only), a private ``ROS_DOMAIN_ID`` for the
  session and a temporary ``ROS_LOG_DIR``, fixed by conftest.py for the whole session before
  anything initialises rclpy.
* :class:`NodeProcess` -- a node started as a separate OS process (``python -m module --ros-args
  ...``), output in a log file, always stopped with terminate -> wait(timeout) -> kill.
* :class:`RosClient` -- an rclpy node in a private Context in the test process, with bounded waits:
  collectors for topics and /rosout, service calls and remote parameter changes.

Every wait is bounded (``TIMEOUT`` seconds unless told).  Use with ``from ros_fixtures import *``.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from locations import REPO

rclpy = pytest.importorskip(
    "rclpy", reason="rclpy not installed (run the tests with .venv/bin/python)")

from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.parameter_client import AsyncParameterClient  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402

ROOT = REPO
# the modules of the managed (lifecycle) node kinds
MANAGED_MODULES = {"robot_dynamics_ros.nodes.inverse_dynamics",
                   "robot_dynamics_ros.nodes.gravity_compensation",
                   "robot_dynamics_ros.nodes.external_torque_observer"}
TIMEOUT = 20.0                   # s: generous, the machine is shared (bounded all the same)
RESEND = 5.0                     # s: a query with no answer yet is sent again (RosClient.call)


def ros_environment() -> dict:
    """
    Return os.environ with the private ROS settings of this test session.

    conftest.py fixed them before anything could import rclpy (see module docstring).
    """
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    for key in ("ROS_AUTOMATIC_DISCOVERY_RANGE", "ROS_DOMAIN_ID", "ROS_LOG_DIR"):
        assert key in env, f"{key} not set: run the tests with pytest (test/conftest.py sets it)"
    return env


def private_namespace(tag: str) -> str:
    """Return a namespace private to this test session and module."""
    return f"/rdt_{os.getpid()}_{tag}"


@pytest.fixture(scope="session")
def ros_env():
    """Private ROS environment, also applied to this process (restored at the end)."""
    env = ros_environment()
    # the nodes compute on the core's compiled kernels, which this session compiles into its own
    # cache (conftest.py): build it once here, before any node starts, so that no node spends
    # its first seconds (minutes on a loaded machine) compiling them
    from robot_dynamics_ros.core.algorithms.compiled import kernels
    kernels()
    keys = ("ROS_AUTOMATIC_DISCOVERY_RANGE", "ROS_DOMAIN_ID", "ROS_LOG_DIR", "RMW_IMPLEMENTATION")
    saved = {k: os.environ.get(k) for k in keys}
    os.environ.update({k: env[k] for k in keys})
    yield env
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


# ------------------------------------------------------------------------------ processes
def _param_arg(name, value) -> str:
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, (list, tuple)):
        text = "[" + ",".join(repr(v) if isinstance(v, str)
                              else str(float(v)) if isinstance(v, float)
                              else str(v) for v in value) + "]"
    else:
        text = str(value)
    return f"{name}:={text}"


class NodeProcess:
    """A child process running ROS nodes; ``stop()`` always reaps it."""

    running: list[NodeProcess] = []     # started and not yet stopped (their logs on a timeout)

    def __init__(self, argv, env, log_path: Path):
        self.argv = list(argv)
        self.log_path = Path(log_path)
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(self.argv, env=env, stdout=self._log,
                                     stderr=subprocess.STDOUT, cwd=str(ROOT))
        NodeProcess.running.append(self)

    @classmethod
    def node(cls, module, env, log_dir, name, namespace, params=None, extra_args=()):
        """
        Start node ``module`` as ``namespace/name`` with ``params`` (-p) and ``extra_args``.

        A managed node (inverse_dynamics, gravity_compensation) gets ``autostart: true`` unless
        ``params`` say otherwise: started active, as the launch file and the bringup start it.
        """
        argv = [sys.executable, "-m", module, "--ros-args",
                "-r", f"__node:={name}", "-r", f"__ns:={namespace}"]
        params = dict(params or {})
        if module in MANAGED_MODULES:
            params.setdefault("autostart", True)
        for key, value in params.items():
            argv += ["-p", _param_arg(key, value)]
        argv += list(extra_args)
        return cls(argv, env, Path(log_dir) / f"{name}.log")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def log_text(self) -> str:
        if not self._log.closed:
            self._log.flush()
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def stop(self, timeout: float = TIMEOUT) -> int | None:
        if self in NodeProcess.running:
            NodeProcess.running.remove(self)
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout)
        self._log.close()
        return self.proc.returncode


def running_logs(tail: int = 6000) -> str:
    """
    Return the end of the log of every node process still running, to explain a timeout.

    Each headed by its command line and whether it is still alive.
    """
    out = []
    for p in NodeProcess.running:
        state = "alive" if p.alive() else f"exited {p.proc.returncode}"
        out.append(f"--- {' '.join(p.argv[2:])} ({state}), log {p.log_path}:\n"
                   + p.log_text()[-tail:])
    return "\n".join(out) or "(no node process running)"


# ------------------------------------------------------------------------------ the client
class Collector:
    """Messages received on one topic, in order."""

    def __init__(self):
        self.messages = []

    def __call__(self, msg):
        self.messages.append(msg)

    def clear(self):
        self.messages.clear()


class RosClient:
    """An rclpy node in a private Context; every wait spins it with a bound."""

    def __init__(self, name: str):
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node(name, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.rosout = Collector()
        from rcl_interfaces.msg import Log
        self.node.create_subscription(Log, "/rosout", self.rosout, QoSProfile(
            depth=1000, reliability=ReliabilityPolicy.RELIABLE,
            durability=DurabilityPolicy.TRANSIENT_LOCAL))

    def close(self):
        self.executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)

    def spin_for(self, seconds: float):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=max(0.0, min(0.02, end - time.monotonic())))

    def spin_until(self, predicate, timeout: float = TIMEOUT) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if predicate():
                return True
            self.executor.spin_once(timeout_sec=0.02)
        return bool(predicate())

    def collect(self, msg_type, topic: str, depth: int = 100) -> Collector:
        c = Collector()
        self.node.create_subscription(msg_type, topic, c, depth)
        return c

    def publisher(self, msg_type, topic: str, depth: int = 10):
        return self.node.create_publisher(msg_type, topic, depth)

    def wait_for_subscriber(self, publisher, timeout: float = TIMEOUT) -> bool:
        """
        Wait until ``publisher`` has a subscriber, and a little more.

        The publisher sees the subscription first; a best-effort subscription (the nodes'
        joint_states) drops what arrives before it has matched the publisher in turn.
        """
        matched = self.spin_until(lambda: publisher.get_subscription_count() > 0, timeout)
        self.spin_for(0.3)
        return matched

    def publish_until(self, publish, predicate, timeout: float = TIMEOUT, period: float = 0.1):
        """Call ``publish()`` every ``period`` s until ``predicate()`` returns a truthy value."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            publish()
            got = self._spin_for_result(predicate, min(period, max(0.0, end - time.monotonic())))
            if got:
                return got
        return predicate()

    def _spin_for_result(self, predicate, seconds):
        end = time.monotonic() + seconds
        while True:
            got = predicate()
            if got or time.monotonic() >= end:
                return got
            self.executor.spin_once(timeout_sec=0.01)

    def call(self, client, request, timeout: float = TIMEOUT):
        """
        Call a service (waiting for it first); returns the response (fails on timeout).

        A query (every request but a lifecycle transition's) is sent again every ``RESEND`` s
        until an answer comes, within ``timeout`` all the same: rmw_fastrtps waits only a
        moment for a new client's response reader to be matched before it drops the answer
        ("failed to send response", ros2/rmw_fastrtps#390 and #467), which a loaded machine can hit
        on the first call after ``wait_for_service`` (the likely cause of a full run's one
        timeout of the tool scaler's first call, 2026-11-29; not reproduced alone).
        """
        assert client.wait_for_service(
            timeout_sec=timeout), f"service {client.srv_name} not available"
        resend = not type(request).__module__.startswith("lifecycle_msgs")
        end = time.monotonic() + timeout
        futures = [client.call_async(request)]
        while True:
            left = end - time.monotonic()
            step = min(left, RESEND) if resend else left
            if self.spin_until(lambda: any(f.done() for f in futures), max(step, 0.0)):
                return next(f for f in futures if f.done()).result()
            if time.monotonic() >= end:
                pytest.fail(f"no answer from {client.srv_name} in {timeout} s (sent "
                            f"{len(futures)} times); the nodes' logs:\n" + running_logs())
            futures.append(client.call_async(request))

    def set_parameters(self, node_fqn: str, values: dict):
        """Set parameters of a remote node; returns the list of SetParametersResult."""
        client = AsyncParameterClient(self.node, node_fqn)
        assert client.wait_for_services(
            timeout_sec=TIMEOUT), f"parameter services of {node_fqn} not up"
        params = [Parameter(name, value=value) for name, value in values.items()]
        future = client.set_parameters(params)
        assert self.spin_until(future.done, TIMEOUT), f"set_parameters on {node_fqn} timed out"
        return future.result().results

    def get_parameters(self, node_fqn: str, *names):
        client = AsyncParameterClient(self.node, node_fqn)
        assert client.wait_for_services(
            timeout_sec=TIMEOUT), f"parameter services of {node_fqn} not up"
        future = client.get_parameters(list(names))
        assert self.spin_until(future.done, TIMEOUT), f"get_parameters on {node_fqn} timed out"
        from rclpy.parameter import parameter_value_to_python
        return [parameter_value_to_python(v) for v in future.result().values]

    def logs_from(self, node_name: str, contains: str = "", level: int | None = None):
        """/rosout messages of a node (name as in the Log message, e.g. 'ns.node' or 'node')."""
        return [m for m in self.rosout.messages
                if m.name.endswith(node_name) and contains in m.msg
                and (level is None or m.level == level)]


@contextmanager
def service_node(ros_env, ros_client, log_dir, namespace: str, services: dict, params: dict,
                 module: str = "robot_dynamics_ros.nodes.dynamics_service",
                 name: str = "dynamics_service"):
    """
    Start a service node process with a client per service (``services``: name -> type).

    Yields (process, ros_client, clients); the process is always stopped, and must have exited
    cleanly.
    """
    proc = NodeProcess.node(module, ros_env, log_dir, name, namespace, params)
    try:
        clients = {s: ros_client.node.create_client(
            srv, f"{namespace}/{s}") for s, srv in services.items()}
        for c in clients.values():
            assert c.wait_for_service(
                timeout_sec=TIMEOUT), f"{c.srv_name} not up:\n" + proc.log_text()
        yield proc, ros_client, clients
    finally:
        proc.stop()
    assert proc.proc.returncode in (0, -15), proc.log_text()


def call_service(node, services: dict, name: str, **fields):
    """Call service ``name`` of a :func:`service_node` with the request ``fields``."""
    _, client, clients = node
    request = services[name].Request()
    for key, value in fields.items():
        setattr(request, key, value)
    return client.call(clients[name], request)


def service_case(tag: str, services: dict, params: dict):
    """
    Return (namespace, svc, call) of a test module on one dynamics_service_node process.

    ``svc``: a module fixture (bind it to the name ``svc`` in the module) that starts the node
    with ``params`` in a namespace private to ``tag`` (:func:`service_node`); ``call(svc, name,
    **fields)`` calls one of its ``services``.
    """
    namespace = private_namespace(tag) + "/robot_dynamics"

    @pytest.fixture(scope="module")
    def svc(ros_env, ros_client, tmp_path_factory):
        with service_node(ros_env, ros_client, tmp_path_factory.mktemp(tag), namespace, services,
                          params) as node:
            yield node

    def call(node, name, **fields):
        return call_service(node, services, name, **fields)
    return namespace, svc, call


@pytest.fixture(scope="module")
def ros_client(ros_env, request):
    client = RosClient(f"test_client_{os.getpid()}")
    yield client
    client.close()
