"""
The benchmarks cannot rot: each one named in the documentation exists and runs.

Every ``bench/<name>.py`` that README.md or a page of doc/ names exists and is run by
``bench/run_all.py`` (``make bench``); every benchmark there runs in its ``--quick`` mode (tiny
sizes, a few seconds: a check that it still works with the package as it is, not a measurement)
and exits 0.  The benchmarks that start DDS (node processes over loopback) carry the ``ros``
marker and get this session's ROS_DOMAIN_ID.  The reference libraries of requirements/bench.txt
(toppra, roboticstoolbox) are optional: without them a benchmark skips that comparison.
"""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
# Benchmarks that start nodes (DDS): in processes of their own, or in-process (bench_observer).
USES_DDS = {"bench_ros_latency.py", "bench_closed_loop.py", "bench_bags.py",
            "bench_oversize_request.py", "bench_observer.py", "bench_proxy.py"}
QUICK_TIMEOUT = 180   # s: a quick run takes seconds; this only bounds a hung one


def documented_benchmarks():
    """Return the bench/*.py scripts that README.md and doc/*.md name."""
    names = set()
    for page in [ROOT / "README.md", *sorted((ROOT / "doc").glob("*.md"))]:
        names.update(re.findall(r"bench/([A-Za-z0-9_]+\.py)", page.read_text(encoding="utf-8")))
    return names


def run_all_benchmarks():
    text = (BENCH / "run_all.py").read_text()
    listed = re.search(r"BENCHMARKS = \[(.*?)\]", text, re.S)[1]
    return re.findall(r'"([A-Za-z0-9_]+\.py)"', listed)


def test_every_documented_benchmark_exists_and_is_run_by_make_bench():
    documented = documented_benchmarks()
    assert documented, "no benchmark named in the documentation"
    missing = sorted(name for name in documented if not (BENCH / name).is_file())
    assert missing == [], "named in README.md or doc/ but not in bench/"
    scripts = {p.name for p in BENCH.glob("bench_*.py")}
    assert sorted(set(run_all_benchmarks())) == sorted(scripts), "bench/run_all.py's list"
    assert sorted(documented - scripts) == []


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=[pytest.mark.ros] if name in USES_DDS else [])
    for name in sorted(p.name for p in BENCH.glob("bench_*.py"))])
def test_benchmark_runs_in_its_quick_mode(name, tmp_path):
    env = dict(os.environ, BENCH_ROS_DOMAIN_ID=os.environ["ROS_DOMAIN_ID"],
               ROS_LOG_DIR=str(tmp_path / "roslog"), MPLBACKEND="Agg")
    run = subprocess.run([sys.executable, str(BENCH / name), "--quick"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=QUICK_TIMEOUT)
    assert run.returncode == 0, (run.stdout + run.stderr)[-4000:]
    assert run.stdout.strip(), "the benchmark printed nothing"
