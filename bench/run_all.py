"""
Run every benchmark under bench/ in turn (`make bench`), with this interpreter.

Each benchmark times the package against a baseline measured in the same run (and against
Pinocchio, roboticstoolbox-python and toppra when the optional `bench` extra is installed).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHMARKS = ["bench_kernel.py", "bench_core.py", "bench_codegen.py", "bench_formulations.py",
              "bench_codegen_cpp.py", "bench_scaling.py", "bench_task_space.py",
              "bench_urdf.py", "bench_identification.py",
              "bench_ros_latency.py", "bench_simulation.py", "bench_joint_state_cdr.py",
              "bench_bags.py", "bench_fleet.py",
              "bench_closed_loop.py", "bench_oversize_request.py", "bench_observer.py",
              "bench_first_contact.py", "bench_proxy.py"]


def main() -> int:
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")   # DDS stays on loopback
    failed = []
    for name in BENCHMARKS:
        path = HERE / name
        if not path.exists():
            continue
        print(f"\n===== {name} =====", flush=True)
        if subprocess.run([sys.executable, str(path)], env=env).returncode != 0:
            failed.append(name)
    if failed:
        print(f"\nfailed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
