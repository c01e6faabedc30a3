"""
Speed of ``bag process`` on fleets of bags (Dask) against one process doing them in turn.

    flock /work/bench.lock python3 bench/bench_fleet.py [--quick] [--cluster] [--workers N]
                                                        [--bags N] [--no-growth]

* **Speed-up**: 4 bags (``--bags``) of 100,000 Puma 560 joint states at 1 kHz with a reference
  (MCAP, all three outputs; ``bench_bags.make_bag``) processed (a) by ``process_bag`` called for
  one bag after the other in this process, the reference; (b) by ``process_fleet`` with one worker
  (a plain loop in this process: the fleet's own cost); (c) with ``--workers`` processes (the
  engine's local worker processes, default: the cores; their start included); with ``--cluster``
  also (d) a dask.distributed LocalCluster of that many worker processes on loopback, started
  before the timing.  Reference and fleets timed in turns, best of the repeats.  Also the CPU
  seconds per wall second of this process and its workers (how many cores the run really had)
  and of the whole machine (what the other work took), and the load.
* **Growth**: 1, 2, 4, ..., 64 bags of 5,000 joint states with ``--workers`` processes: wall time
  against the number of bags, and the least-squares line a + b N (start-up, seconds per bag).

The speed-up is bounded by the cores (2 here, shared with other work: see the load printed) and,
on a cluster, by the file system the bags and outputs travel through (doc/bags.md, "Fleets").
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
# an install has its bytecode: written here, read by the workers' server (which would otherwise
# compile the package's modules from source where PYTHONDONTWRITEBYTECODE is set)
sys.dont_write_bytecode = False

from bench_bags import make_bag  # noqa: E402
from robot_dynamics_ros.bags.engine import default_workers  # noqa: E402
from robot_dynamics_ros.bags.fleet import FleetOptions, find_bags, process_fleet  # noqa: E402
from robot_dynamics_ros.bags.process import ProcessOptions, process_bag  # noqa: E402
from robot_dynamics_ros.core import RobotModel  # noqa: E402

OPTIONS = ProcessOptions(reference_topic="/reference_trajectory")
MODEL = RobotModel.named("puma560")


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


class CpuMeter:
    """
    Measure the CPU seconds of this process and its descendants, and of the whole machine.

    Descendants are sampled every 0.1 s (the local workers are the forkserver's children, not
    ours); the machine's from /proc/stat.
    """

    def __enter__(self):
        import psutil
        self.me, self.seen, self.stop = psutil.Process(), {}, threading.Event()
        self.before = {p.pid: self._cpu(p) for p in self._family()}   # older processes
        self.machine = self._machine()
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()
        return self

    @staticmethod
    def _machine() -> float:
        with open("/proc/stat") as stat:
            fields = [int(x) for x in stat.readline().split()[1:]]
        idle = fields[3] + fields[4]
        return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")

    def _family(self):
        return [self.me] + self.me.children(recursive=True)

    @staticmethod
    def _cpu(process) -> float:
        import psutil
        try:
            t = process.cpu_times()
            return t.user + t.system
        except psutil.Error:
            return 0.0

    def _sample(self):
        while not self.stop.wait(0.1):
            for p in self._family():
                self.seen[p.pid] = max(self.seen.get(p.pid, 0.0), self._cpu(p))

    def __exit__(self, *_):
        self.stop.set()
        self.thread.join()
        for p in self._family():
            self.seen[p.pid] = max(self.seen.get(p.pid, 0.0), self._cpu(p))
        self.machine = self._machine() - self.machine
        self.ours = sum(t - self.before.get(pid, 0.0) for pid, t in self.seen.items())


def fleet_dir(workdir: Path, source: Path, bags: int, count: int) -> Path:
    """Return a directory of ``bags`` copies of the bag ``source`` (each its own name)."""
    directory = workdir / f"fleet_{bags}x{count}"
    if not directory.exists():
        directory.mkdir()
        for k in range(bags):
            target = directory / f"run_{k:03d}"
            target.mkdir()
            for f in source.iterdir():
                name = f.name.replace(source.name, target.name)
                os.link(f, target / name) if f.suffix == ".mcap" else shutil.copy(f, target / name)
            text = (target / "metadata.yaml").read_text().replace(source.name, target.name)
            (target / "metadata.yaml").write_text(text)
    return directory


def sequential(directory: Path, out: Path) -> tuple[float, CpuMeter]:
    """Return the wall seconds and CPU use of process_bag on every bag, one after the other."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    with CpuMeter() as cpu:
        started = time.perf_counter()
        for bag in sorted(directory.iterdir()):
            process_bag(bag, out / bag.name, MODEL, OPTIONS)
        wall = time.perf_counter() - started
    return wall, cpu


def fleet(directory: Path, out: Path, options: FleetOptions) -> tuple[float, CpuMeter]:
    """Return the wall seconds and the CPU use of process_fleet over ``directory``."""
    shutil.rmtree(out, ignore_errors=True)
    with CpuMeter() as cpu:
        started = time.perf_counter()
        outcomes = process_fleet(find_bags([str(directory)]), out, MODEL, OPTIONS, options)
        wall = time.perf_counter() - started
    failed = [o for o in outcomes if o.status != "done"]
    if failed:
        raise RuntimeError(f"{len(failed)} bags not done: {failed[0]}")
    return wall, cpu


def speed_up(workdir: Path, count: int, bags: int, workers: int, repeat: int, cluster: bool):
    source = workdir / "source"
    make_bag(source, count)
    directory = fleet_dir(workdir, source, bags, count)
    address, local = None, None
    if cluster:
        from distributed import LocalCluster
        local = LocalCluster(n_workers=workers, threads_per_worker=1, host="127.0.0.1",
                             dashboard_address=None,
                             scheduler_kwargs={"dashboard_address": "127.0.0.1:0"})
        address = local.scheduler_address
    runs = {"sequential": [], "fleet, 1 worker": [], f"fleet, {workers} processes": []}
    if cluster:
        runs[f"dask.distributed, {workers} workers"] = []
    print(f"{bags} bags of {count:,} Puma joint states at 1 kHz + a reference, MCAP, 3 outputs; "
          f"{load()} before")
    try:
        for _ in range(repeat):                 # in turns: the machine's load weighs on all
            runs["sequential"].append(sequential(directory, workdir / "out_seq"))
            runs["fleet, 1 worker"].append(fleet(directory, workdir / "out_1",
                                                 FleetOptions(workers=1)))
            runs[f"fleet, {workers} processes"].append(
                fleet(directory, workdir / "out_w", FleetOptions(workers=workers)))
            if cluster:
                runs[f"dask.distributed, {workers} workers"].append(
                    fleet(directory, workdir / "out_c", FleetOptions(scheduler=address)))
    finally:
        if local is not None:
            local.close()
    reference = min(w for w, _ in runs["sequential"])
    total = bags * count
    print(f"  {'':<32} {'wall':>9}  {'msg/s':>9}  {'speed-up':>8}  {'msg/CPU-s':>9}  "
          "cores used: ours, machine")
    for name, times in runs.items():
        wall, cpu = min(times, key=lambda t: t[0])
        print(f"  {name:<32} {wall:7.2f} s  {total / wall:9,.0f}  {reference / wall:7.2f}x  "
              f"{total / cpu.ours:9,.0f}  {cpu.ours / wall:10.2f} {cpu.machine / wall:8.2f}")
    print(f"  ({load()} after; best of {repeat}; cores used = CPU seconds per wall second)")


def growth(workdir: Path, count: int, sizes, workers: int):
    source = workdir / f"small_{count}"
    make_bag(source, count)
    print(f"\ngrowth: N bags of {count:,} joint states, {workers} processes ({load()} before)")
    rows = []
    for n in sizes:
        directory = fleet_dir(workdir, source, n, count)
        wall, cpu = fleet(directory, workdir / f"out_growth_{n}", FleetOptions(workers=workers))
        rows.append((n, wall))
        print(f"  {n:3d} bags: {wall:7.2f} s  ({wall / n:5.2f} s per bag; cores used: ours "
              f"{cpu.ours / wall:.2f}, machine {cpu.machine / wall:.2f})", flush=True)
        shutil.rmtree(workdir / f"out_growth_{n}")
    n, wall = np.array(rows, dtype=float).T
    b, a = np.polyfit(n, wall, 1)
    print(f"  least squares: {a:.2f} s + {b:.3f} s per bag ({load()} after)")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="4 bags of 2,000 states, growth to 2 bags of 500, one repeat")
    parser.add_argument("--workers", type=int, default=default_workers())
    parser.add_argument("--cluster", action="store_true",
                        help="also a dask.distributed LocalCluster (loopback)")
    parser.add_argument("--repeat", type=int, default=None)
    parser.add_argument("--bags", type=int, default=None, help="bags of the speed-up (4)")
    parser.add_argument("--no-growth", action="store_true", help="the speed-up alone")
    args = parser.parse_args(argv)
    count, small, bags = (2_000, 500, 4) if args.quick else (100_000, 5_000, 4)
    bags = args.bags or bags
    sizes = (1, 2) if args.quick else (1, 2, 4, 8, 16, 32, 64)
    repeat = args.repeat or (1 if args.quick else 2)
    print(f"{os.cpu_count()} cores, {default_workers()} usable by this process")
    workdir = Path(tempfile.mkdtemp(prefix="bench-fleet-"))
    try:
        speed_up(workdir, count, bags, args.workers, repeat, args.cluster)
        if not args.no_growth:
            growth(workdir, small, sizes, args.workers)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
