"""
First contact: what a user's first calls cost, in fresh processes, on a cold and a warm install.

    python3 bench/bench_first_contact.py [--quick] [--no-cold]

* **install**: ``robot-dynamics compile`` into an empty cache (what tools/setup_venv.sh runs at the
  end of the set-up: numba's cache, then the kernels' and passes' extensions): its wall time
  (``--quick``: the default cache, which it only loads).  The *warm install* is that cache;
  the *cold install* an empty cache directory per measurement (``ROBOT_DYNAMICS_ROS_CACHE_DIR``
  and ``XDG_CACHE_HOME`` pointing at new temporary directories: what a user who skipped
  ``robot-dynamics compile`` meets).
* **pip wheel install** (not in ``--quick``): this checkout's wheel built as pip builds it (``pip
  wheel``, the venv's numba: its build compiles the kernels into the wheel, setup.py), its wall
  time, then pip-installed into a new prefix and used with an empty cache and no ``robot-dynamics
  compile``: the rows below but the launch (which needs a ROS workspace's layout).  Then the
  speed of the kernels it ships (built for any CPU of the architecture) against the host-tuned
  ones of this process's cache, entry points called directly in turns (rnea, mass matrix,
  forward dynamics of the Puma 560, one state and 1,000), with Pinocchio's calls on one state.
* **first dynamics**: a fresh process imports the core, loads a vendor URDF it has never seen
  (Doosan M1013, test/data/urdf) and computes a first ``rnea``, ``forward_dynamics`` and
  ``mass_matrix``: the whole process's wall time (target after install: at most 1.5 s), beside
  Pinocchio doing the same (import, ``buildModelFromUrdf``, rnea, aba, crba) in a fresh process,
  and whether the process imported numba (it does not where ``robot-dynamics compile`` built the
  kernels' extension, core/jit.py "Ahead of time"; without it, core/algorithms/route.py runs
  plain Python first).
* **first scale vs later**: a fresh process's first time-optimal and uniform scaling of the
  demo trajectory against the second, the same call again (target: within 2x).
* **first service call vs later** (not in ``--quick``: it starts DDS): a dynamics_service
  node in a fresh process, its first ``get_mass_matrix`` answer against the next ones.
* **launch to first output** (not in ``--quick``): ``ros2 launch robot_dynamics_ros
  robot_dynamics.launch.py`` started by a harness that publishes the Puma's joint states at
  100 Hz; the wall time from starting the launch to the first ``gravity_effort`` (target: 3 s).
* **warm commands**: ``robot-dynamics check``, ``scale`` (a small job) and ``bag info`` from the
  command line, wall time (target at most 0.5 s), beside ``python -c "import numpy"`` (the floor
  of any Python command) timed in the same run.
* numba's compilations in each fresh process are counted (its ``numba:compile`` events; a cache
  load is none), and a last line says whether anything compiled after install.  ``--no-cold``
  skips the cold runs (minutes on a busy 2-core machine).

Children run without ``PYTHONDONTWRITEBYTECODE`` (an install has its bytecode).  The machine has 2
cores shared with other work: the load is printed before and after; re-run when it is quiet.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "test" / "support"))
URDF = ROOT / "test" / "data" / "urdf" / "dsr_description2" / "urdf" / "m1013.urdf"
PYTHON = sys.executable
CLI = [PYTHON, "-m", "robot_dynamics_ros.commands.cli"]
TARGET_FIRST = 1.5          # s: a fresh process's first dynamics after install
TARGET_COMMAND = 0.5        # s: a warm command, start to finish

# Run in the child: count numba's compilations (cache loads are not compilations), listening
# from numba's import on, without importing it (a process that never needs numba must not pay
# for it here either).
COUNTING = """
import time
_started = time.perf_counter()
import importlib.abc
import importlib.util
import sys
sys.path.insert(0, {root!r})
_compiled = []


class _CountCompilations(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "numba":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        original = spec.loader.exec_module

        def exec_module(module):
            original(module)
            from numba.core import event

            class _Count(event.Listener):
                def on_start(self, ev):
                    _compiled.append(1)

                def on_end(self, ev):
                    pass
            event.register("numba:compile", _Count())
        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _CountCompilations())
"""

FIRST_DYNAMICS = COUNTING + """
import numpy as np
from robot_dynamics_ros.core import RobotModel, forward_dynamics, mass_matrix, rnea
model = RobotModel.from_description({urdf!r})
q = np.linspace(-0.4, 0.5, model.n)
qd = np.linspace(0.3, -0.2, model.n)
first = time.perf_counter()
tau = rnea(model, q, qd, np.zeros(model.n))
qdd = forward_dynamics(model, q, qd, tau)
B = mass_matrix(model, q)
done = time.perf_counter()
rnea(model, q, qd, np.zeros(model.n)); forward_dynamics(model, q, qd, tau); mass_matrix(model, q)
again = time.perf_counter() - done
print(json.dumps({{"process": done - _started, "first_calls": done - first,
                  "later_calls": again, "compilations": len(_compiled), "n": model.n,
                  "numba": "numba" in sys.modules}}))
""".replace("import numpy as np", "import json\nimport numpy as np")

PINOCCHIO = """
import time
started = time.perf_counter()
import json
import numpy as np
import pinocchio as pin
model = pin.buildModelFromUrdf({urdf!r})
data = model.createData()
q = np.linspace(-0.4, 0.5, model.nq)
qd = np.linspace(0.3, -0.2, model.nv)
tau = pin.rnea(model, data, q, qd, np.zeros(model.nv))
pin.aba(model, data, q, qd, tau)
pin.crba(model, data, q)
print(json.dumps({{"process": time.perf_counter() - started}}))
"""

FIRST_SCALE = COUNTING + """
import json
import numpy as np
from robot_dynamics_ros.core import (JointTrajectory, RobotModel, time_optimal_scaling,
                                     uniform_scaling)
model = RobotModel.named("puma560")
q0 = np.clip(np.zeros(model.n), model.lower + 0.1, model.upper - 0.1)
q1 = q0 + 0.25 * (model.upper - model.lower) * np.sign(0.5 * (model.lower + model.upper) - q0
                                                        + 1e-9)
zeros = np.zeros((3, model.n))
traj = JointTrajectory(model.joint_names, [0.0, 1.0, 2.0], [q0, q1, q0], zeros, zeros)
out = {{}}
for name, scale in (("time_optimal", time_optimal_scaling), ("uniform", uniform_scaling)):
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        scale(model, traj)
        times.append(time.perf_counter() - t0)
    out[name] = times
out["compilations"] = len(_compiled)
print(json.dumps(out))
"""

SERVICE = COUNTING + """
import json, threading
import numpy as np
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from robot_dynamics_interfaces.srv import GetMassMatrix
from robot_dynamics_ros.nodes.dynamics_service import DynamicsServiceNode
rclpy.init()
node = DynamicsServiceNode(parameter_overrides=[Parameter("robot_description", value="puma560")])
client_node = rclpy.create_node("first_contact_client")
executor = SingleThreadedExecutor()
executor.add_node(node)
running = [True]


def spin():
    while running[0]:
        executor.spin_once(timeout_sec=0.05)


spinner = threading.Thread(target=spin)
spinner.start()
client = client_node.create_client(GetMassMatrix, "get_mass_matrix")
assert client.wait_for_service(timeout_sec=30.0)
times = []
for k in range(6):
    request = GetMassMatrix.Request()
    request.position = [0.1 * k + 0.05 * i for i in range(6)]
    t0 = time.perf_counter()
    future = client.call_async(request)
    rclpy.spin_until_future_complete(client_node, future, timeout_sec=60.0)
    times.append(time.perf_counter() - t0)
    assert future.result() is not None and future.result().success
print(json.dumps({{"times": times, "compilations": len(_compiled)}}), flush=True)
running[0] = False
spinner.join()
executor.shutdown()
node.destroy_node()
client_node.destroy_node()
rclpy.shutdown()
"""

LAUNCH = """
import json, os, signal, subprocess, sys, time
sys.path.insert(0, {root!r})
import rclpy
from sensor_msgs.msg import JointState
from robot_dynamics_ros.core import RobotModel
names = RobotModel.named("puma560").joint_names
rclpy.init()
node = rclpy.create_node("first_contact_launch_harness")
got = []
node.create_subscription(JointState, "/robot_dynamics/gravity_effort",
                         lambda msg: got.append(time.perf_counter()), 10)
publisher = node.create_publisher(JointState, "/joint_states", 10)
started = time.perf_counter()
launch = subprocess.Popen([{ros2!r}, "launch", "robot_dynamics_ros", "robot_dynamics.launch.py"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          start_new_session=True)
next_state = started
while not got and time.perf_counter() - started < 120.0 and launch.poll() is None:
    if time.perf_counter() >= next_state:
        msg = JointState(name=list(names), position=[0.1] * len(names),
                         velocity=[0.0] * len(names), effort=[0.0] * len(names))
        msg.header.stamp = node.get_clock().now().to_msg()
        publisher.publish(msg)
        next_state += 0.01
    rclpy.spin_once(node, timeout_sec=0.002)
first = got[0] - started if got else None
try:
    os.killpg(launch.pid, signal.SIGINT)
    launch.wait(timeout=15)
except subprocess.TimeoutExpired:
    os.killpg(launch.pid, signal.SIGKILL)
    launch.wait(timeout=15)
except ProcessLookupError:
    pass
error = "" if got else launch.stderr.read().decode(errors="replace")[-2000:]
print(json.dumps({{"first": first, "error": error}}), flush=True)
node.destroy_node()
rclpy.shutdown()
"""
TARGET_LAUNCH = 3.0         # s: ros2 launch to the first gravity_effort


def child(script: str, env: dict, **values) -> tuple[dict, float]:
    """
    Run ``script`` in a fresh process; return (its JSON line, the process's wall time).

    The package is the one first on ``env``'s PYTHONPATH (the checkout, or a wheel's install).
    """
    started = time.perf_counter()
    root = env["PYTHONPATH"].split(os.pathsep)[0]
    run = subprocess.run([PYTHON, "-c", script.format(root=root, **values)], env=env,
                         capture_output=True, text=True, timeout=1800, cwd=tempfile.gettempdir())
    wall = time.perf_counter() - started
    if run.returncode != 0:
        raise RuntimeError(run.stderr[-3000:])
    return json.loads(run.stdout.strip().splitlines()[-1]), wall


def wall(argv: list, env: dict, repeat: int) -> float:
    """Return the best wall time of ``argv`` over ``repeat`` runs (it must exit 0)."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        run = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=1800)
        best = min(best, time.perf_counter() - started)
        if run.returncode != 0:
            raise RuntimeError(f"{argv}: {run.stderr[-2000:]}")
    return best


def first_dynamics(env: dict, label: str, compiled: list):
    result, total = child(FIRST_DYNAMICS, env, urdf=str(URDF))
    compiled.append((label, "first dynamics", result["compilations"]))
    print(f"  first dynamics of a new URDF ({URDF.name}, {result['n']} joints), {label}: "
          f"process {total:.2f} s (first rnea + forward_dynamics + mass_matrix "
          f"{result['first_calls'] * 1e3:.1f} ms, the same again "
          f"{result['later_calls'] * 1e3:.2f} ms), {result['compilations']} numba compilations, "
          f"numba {'imported' if result['numba'] else 'not imported'}")
    return total


def first_scale(env: dict, label: str, compiled: list):
    result, total = child(FIRST_SCALE, env)
    compiled.append((label, "first scale", result["compilations"]))
    for name in ("time_optimal", "uniform"):
        first, later = result[name][0], min(result[name][1:])
        print(f"  first {name} scaling, {label}: {first * 1e3:.0f} ms, later {later * 1e3:.0f} ms "
              f"= {first / later:.2f} x (target: within 2 x)")


def first_service(env: dict, label: str, compiled: list):
    result, _ = child(SERVICE, env)
    compiled.append((label, "first service call", result["compilations"]))
    first, later = result["times"][0], min(result["times"][1:])
    print(f"  first get_mass_matrix service call, {label}: {first * 1e3:.1f} ms, later "
          f"{later * 1e3:.1f} ms = {first / later:.2f} x (target: within 2 x)")


def first_launch(env: dict, label: str):
    """Print the seconds from ``ros2 launch`` to the first gravity_effort (a harness process)."""
    ros2 = str(Path(sys.prefix) / "bin" / "ros2")
    if not Path(ros2).exists():
        print(f"  launch to first gravity_effort, {label}: no ros2 command in {sys.prefix}")
        return
    result, _ = child(LAUNCH, env, ros2=ros2)
    if result["first"] is None:
        print(f"  launch to first gravity_effort, {label}: NO output within 120 s: "
              f"{result['error']}")
        return
    met = "met" if result["first"] <= TARGET_LAUNCH else "MISSED"
    print(f"  ros2 launch to the first gravity_effort, {label}: {result['first']:.2f} s "
          f"(target at most {TARGET_LAUNCH:g} s on a warm install: {met})")


def commands(env: dict, repeat: int, workdir: Path):
    traj = workdir / "small.yaml"
    traj.write_text("joint_names: [joint1, joint2, joint3, joint4, joint5, joint6]\npoints:\n"
                    "  - {time_from_start: 0.0, positions: [0, 0, 0, 0, 0, 0]}\n"
                    "  - {time_from_start: 1.0, positions: [0.5, 0.3, -0.2, 0.1, 0.2, 0.3]}\n")
    bag = workdir / "bag"
    subprocess.run([PYTHON, "-c", f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
                    "import numpy as np\nfrom robot_dynamics_ros.bags import write_joint_states\n"
                    f"write_joint_states({str(bag)!r}, ['a', 'b'], np.arange(100) * 1e-3, "
                    "np.zeros((100, 2)), np.zeros((100, 2)), np.zeros((100, 2)))"],
                   env=env, check=True, timeout=600)
    floor = wall([PYTHON, "-c", "import numpy"], env, repeat)
    print(f"  python -c 'import numpy' (the floor of any Python command): {floor:.2f} s")
    for name, argv in (("check puma560", ["check", "puma560"]),
                       ("scale puma560 (2 points, uniform)",
                        ["scale", "puma560", str(traj)]),
                       ("bag info (100 messages)", ["bag", "info", str(bag)])):
        best = wall(CLI + argv, env, repeat)
        met = "met" if best <= TARGET_COMMAND else "MISSED"
        print(f"  robot-dynamics {name}: {best:.2f} s = {best / floor:.1f} x the floor "
              f"(target at most {TARGET_COMMAND:g} s: {met})")


def install(env: dict, cache: Path | None) -> tuple[dict, float]:
    """
    Return the environment of a cache filled by ``robot-dynamics compile``, and its seconds.

    ``cache`` None: the default cache (``--quick``: it only loads what the set-up compiled).
    """
    warm = env if cache is None else cache_env(env, cache)
    started = time.perf_counter()
    run = subprocess.run(CLI + ["compile", "--quiet"], env=warm, capture_output=True,
                         text=True, timeout=3600)
    if run.returncode != 0:
        raise RuntimeError(f"robot-dynamics compile: {run.stderr[-2000:]}")
    return warm, time.perf_counter() - started


def wheel_install(env: dict, workdir: Path) -> tuple[dict, float]:
    """
    Build this checkout's wheel as pip does and install it into a new prefix with pip.

    Returns the environment of that install (its site-packages first on the path, an empty
    cache) and the seconds of the build and install (test/support/wheel_build.py).
    """
    from wheel_build import build_and_install
    started = time.perf_counter()
    _, site = build_and_install(workdir / "wheel")
    seconds = time.perf_counter() - started
    rest = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != str(ROOT)]
    return cache_env(dict(env, PYTHONPATH=os.pathsep.join([str(site)] + rest)),
                     workdir / "wheel-cache"), seconds


def shipped_against_host(site: Path, repeat: int = 1000):
    """Print the wheel's shipped kernels' speed against the host-tuned ones (and Pinocchio's)."""
    import importlib.util
    sys.path[:0] = [str(ROOT), str(ROOT / "bench")]
    from bench_kernel import in_turns
    from robot_dynamics_ros.core import RobotModel
    from robot_dynamics_ros.core.algorithms import compiled
    directory = site / "robot_dynamics_ros" / "core" / "shipped"
    name = json.loads((directory / "index.json").read_text())["kernels"]["name"]
    path, = directory.glob(name + ".*")
    spec = importlib.util.spec_from_file_location(name, path)
    shipped = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(shipped)
    model, host = RobotModel.named("puma560"), compiled.kernels()
    print(f"  the wheel's kernels (any CPU) against this cache's ({compiled.status()[:40]}...), "
          f"puma560, best of {repeat} windows in turns:")
    reference = pinocchio_calls(model)
    for rows in (1, 1000):
        ours, theirs = entry_calls(shipped, model, rows), entry_calls(host, model, rows)
        for what in ours:
            a, b = in_turns(ours[what], theirs[what], repeat)
            line = (f"    {what:17s} {'one state' if rows == 1 else f'{rows} states':>11s}: "
                    f"shipped {a / rows * 1e6:6.3f} us, host {b / rows * 1e6:6.3f} us per state "
                    f"= {a / b:.2f} x")
            if rows == 1 and what in reference:
                _, pin_time = in_turns(ours[what], reference[what], repeat)
                line += f"; Pinocchio {pin_time * 1e6:.3f} us (shipped {a / pin_time:.2f} x)"
            print(line, flush=True)


def entry_calls(module, model, rows: int):
    """Return name -> a no-argument call of ``module``'s entry point on ``rows`` states."""
    from robot_dynamics_ros.core.algorithms import compiled
    from robot_dynamics_ros.core.model.bodies import numeric_form
    ne, body = compiled.constants(model, numeric_form(model)), compiled.constants(model)
    rng = np.random.default_rng(0)
    q, qd, x = (rng.uniform(-1, 1, (rows, model.n)) for _ in range(3))
    tau, mass = np.empty((rows, model.n)), np.empty((rows, model.n, model.n))
    if rows == 1:
        q, qd, x, tau, mass = q[0], qd[0], x[0], tau[0], mass[0]
        return {"rnea": lambda: module.rnea_one(ne, q, qd, x, tau),
                "mass_matrix": lambda: module.mass_one(body, q, mass),
                "forward_dynamics": lambda: module.aba_one(body, q, qd, x, tau)}
    return {"rnea": lambda: module.rnea_many(ne, q, qd, x, tau),
            "mass_matrix": lambda: module.mass_many(body, q, mass),
            "forward_dynamics": lambda: module.aba_many(body, q, qd, x, tau)}


def pinocchio_calls(model):
    """Return name -> Pinocchio's call on one state, or {} without Pinocchio."""
    from reference_models import pinocchio_model
    pm = pinocchio_model(model.rigid())
    if pm is None:
        return {}
    import pinocchio as pin
    data = pm.createData()
    rng = np.random.default_rng(0)
    q, qd, x = (rng.uniform(-1, 1, model.n) for _ in range(3))
    return {"rnea": lambda: pin.rnea(pm, data, q, qd, x),
            "mass_matrix": lambda: pin.crba(pm, data, q),
            "forward_dynamics": lambda: pin.aba(pm, data, q, qd, x)}


def cache_env(env: dict, cache: Path) -> dict:
    """Return ``env`` with every cache of the package (and XDG's) under ``cache``."""
    return dict(env, ROBOT_DYNAMICS_ROS_CACHE_DIR=str(cache / "robot_dynamics_ros"),
                XDG_CACHE_HOME=str(cache / "xdg"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="warm install only, no DDS, one run each (a check that it works)")
    parser.add_argument("--no-cold", action="store_true", help="skip the cold-install runs")
    args = parser.parse_args(argv)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    env.pop("PYTHONDONTWRITEBYTECODE", None)        # (an install has its bytecode)
    print(f"First contact (load average {load()})")
    compiled: list = []
    repeat = 1 if args.quick else 3
    with tempfile.TemporaryDirectory(prefix="bench-first-contact-") as work:
        workdir = Path(work)
        warm, seconds = install(env, None if args.quick else workdir / "installed")
        print(f"  install: robot-dynamics compile into "
              f"{'the default cache' if args.quick else 'an empty cache'}: {seconds:.1f} s")
        labels = ["warm install"] if args.quick or args.no_cold else ["cold install",
                                                                      "warm install"]
        wheel = None
        if not args.quick:
            wheel, seconds = wheel_install(env, workdir)
            print(f"  install: pip wheel of this checkout (compiling the kernels into it) and pip "
                  f"install into a new prefix: {seconds:.1f} s")
            labels.append("pip wheel install")
        _, reference = child(PINOCCHIO, env, urdf=str(URDF))
        for label in labels:
            def run_env(what, label=label):     # cold: each measurement its own empty cache
                return {"warm install": warm, "pip wheel install": wheel}.get(label) or \
                    cache_env(env, workdir / what)
            total = first_dynamics(run_env("dynamics"), label, compiled)
            if label != "cold install":
                print(f"    = {total / reference:.1f} x Pinocchio's fresh process "
                      f"({reference:.2f} s); target at most {TARGET_FIRST:g} s: "
                      f"{'met' if total <= TARGET_FIRST else 'MISSED'}")
            first_scale(run_env("scale"), label, compiled)
            if not args.quick:
                first_service(run_env("service"), label, compiled)
                if label != "pip wheel install":
                    first_launch(run_env("launch"), label)
        print("warm commands (best of %d, warm install):" % repeat)
        commands(warm, repeat, workdir)
        if not args.quick:
            shipped_against_host(Path(wheel["PYTHONPATH"].split(os.pathsep)[0]))
    after_install = [(f"{what} ({label})", n) for label, what, n in compiled
                     if label != "cold install" and n]
    print("compiled after install (warm install, pip wheel install): "
          + ("nothing" if not after_install else
             ", ".join(f"{what}: {n} numba compilations" for what, n in after_install)))
    print(f"(load average {load()})")
    return 0


def load() -> str:
    """Return the machine's load averages (1, 5, 15 min) as text."""
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


if __name__ == "__main__":
    sys.exit(main())
