"""
Fleets of bags (bags/fleet.py, bags/engine.py): many bags processed in parallel on Dask.

The oracle is the single-bag ``process_bag``, run here one bag after the other: every engine
(dask's synchronous and multiprocessing schedulers, a dask.distributed LocalCluster in this
process, one with worker processes on loopback) must write the same output bags byte for byte and
report the same figures; the residual RMS is checked against the residuals the output bag holds.
A bad bag fails alone with the single-bag command's error; a bag failing mid-way, an interrupted
driver and a killed worker leave no partial output; a rerun skips what is finished.
"""
import glob
import os
import shutil
import signal

import numpy as np
import pytest

from dask_clusters import loopback_cluster
from independent_readers import independent_messages, joint_state_rows
from robot_dynamics_ros.bags import write_joint_states
from robot_dynamics_ros.bags import fleet as fleet_module
from robot_dynamics_ros.bags.fleet import (FleetOptions, find_bags, format_summary, output_names,
                                           process_fleet, summary_rows, write_summary)
from robot_dynamics_ros.bags.process import (ProcessOptions, ProcessReport, _Processor,
                                             process_bag, read_figures)
from robot_dynamics_ros.core import BagError, rnea

OPTIONS = ProcessOptions(namespace="", chunk_size=64)      # small chunks: many chunk boundaries
GOOD = ("alpha", "beta", "delta", "gamma")


def motion(puma, count, seed, gap_after=None):
    """Return a 1 kHz motion: times, positions, velocities, model torques plus noise."""
    t = np.arange(count) * 1e-3
    if gap_after is not None:
        t[gap_after:] += 0.05                               # 50 ms of messages lost
    phase = np.arange(6) + seed
    q, qd = 0.3 * np.sin(2 * t[:, None] + phase), 0.6 * np.cos(2 * t[:, None] + phase)
    qdd = -1.2 * np.sin(2 * t[:, None] + phase)
    noise = np.random.default_rng(seed).normal(0.0, 0.05, q.shape)
    return t, q, qd, rnea(puma, q, qd, qdd) + noise


def make_fleet(directory, puma):
    """Write the test fleet: four good bags (both storages, a bare .mcap) and a bad one."""
    directory.mkdir()
    write_joint_states(directory / "alpha", puma.joint_names, *motion(puma, 300, 1))
    t, q, qd, tau = motion(puma, 250, 2)
    t[[40, 41]] = t[39]                                     # three messages with one stamp
    write_joint_states(directory / "beta", puma.joint_names, t, q, qd, tau, storage="sqlite3")
    write_joint_states(directory / "delta", puma.joint_names, *motion(puma, 200, 3, 120))
    write_joint_states(directory / "bare", puma.joint_names, *motion(puma, 220, 4))
    shutil.move(directory / "bare" / "bare.mcap", directory / "gamma.mcap")
    shutil.rmtree(directory / "bare")
    write_joint_states(directory / "broken", [f"j{k}" for k in range(6)], *motion(puma, 50, 5))
    (directory / ".epsilon.partial-123").mkdir()            # someone's temporary: ignored


@pytest.fixture(scope="module")
def fleet(tmp_path_factory, puma):
    """Return (input directory, sequential outputs directory, {bag: report or error text})."""
    root = tmp_path_factory.mktemp("fleet")
    make_fleet(root / "in", puma)
    expected = {}
    (root / "sequential").mkdir()
    for name in GOOD + ("broken",):
        source = root / "in" / (name + ".mcap" if name == "gamma" else name)
        try:
            expected[name] = process_bag(source, root / "sequential" / name, puma, OPTIONS)
        except BagError as exc:
            expected[name] = f"unusable bag: {exc}"
    return root / "in", root / "sequential", expected


@pytest.fixture(scope="module")
def cluster():
    """Return the address of a dask.distributed cluster whose workers are threads of this one."""
    with loopback_cluster() as local:
        yield local.scheduler_address


def same_bag(a, b):
    """Tell whether two bag directories hold the same files, byte for byte."""
    files = sorted(p.name for p in a.iterdir())
    return files == sorted(p.name for p in b.iterdir()) and all(
        (a / f).read_bytes() == (b / f).read_bytes() for f in files)


def check_outcomes(outcomes, fleet_data, out, statuses=("done",)):
    """Every good bag's output is the sequential one; the broken bag failed with its error."""
    inputs, sequential, expected = fleet_data
    by_name = {o.name: o for o in outcomes}
    assert sorted(by_name) == sorted(GOOD + ("broken",))
    for name in GOOD:
        o = by_name[name]
        assert o.status in statuses, o
        assert same_bag(out / name, sequential / name), name
        assert o.report._replace(seconds=0) == expected[name]._replace(seconds=0)
    assert by_name["broken"].status == "failed"
    assert by_name["broken"].error == expected["broken"]
    assert "joint names of '/joint_states' do not match robot 'puma560'" in expected["broken"]
    assert not out.joinpath("broken").exists()
    assert not [p for p in out.iterdir() if ".partial" in p.name]


@pytest.mark.parametrize("engine", ["in process", "local processes", "cluster"])
def test_a_fleet_gives_the_single_bag_outputs_bit_for_bit_and_a_bad_bag_fails_alone(
        tmp_path, puma, fleet, engine, request):
    inputs = fleet[0]
    options = {"in process": FleetOptions(workers=1), "local processes": FleetOptions(workers=2),
               "cluster": FleetOptions(scheduler=request.getfixturevalue("cluster")
                                       if engine == "cluster" else None)}[engine]
    seen = []
    outcomes = process_fleet(find_bags([str(inputs)], tmp_path / "out"), tmp_path / "out", puma,
                             OPTIONS, options, on_done=seen.append)
    check_outcomes(outcomes, fleet, tmp_path / "out")
    assert sorted(o.name for o in seen) == sorted(o.name for o in outcomes)


def test_the_figures_are_the_output_bags_residuals_and_stamps(tmp_path, puma, fleet):
    inputs, sequential, expected = fleet
    for name in GOOD:
        report = expected[name]
        residual = joint_state_rows(independent_messages(sequential / name), "/effort_residual")
        assert all(names == list(puma.joint_names) for names in residual["name"])
        rms = np.sqrt(np.mean(np.array(residual["effort"]) ** 2, axis=0))
        np.testing.assert_allclose([report.residual_rms[j] for j in puma.joint_names], rms,
                                   rtol=1e-12)
        assert report.joint_states == {"alpha": 300, "beta": 250, "delta": 200,
                                       "gamma": 220}[name]
        assert read_figures(sequential / name) == report._replace(seconds=0.0)
    assert expected["alpha"].worst_stamp_issue == "none"
    assert expected["beta"].worst_stamp_issue == "2 duplicate"
    assert expected["beta"].stamps == {"duplicate": 2, "out of order": 0}
    assert expected["delta"].steps["largest gap"] == 51_000_000
    assert expected["delta"].worst_stamp_issue == "gap of 51 ms (41 periods)"
    assert read_figures(inputs / "alpha") is None            # not written by process_bag


def test_the_worst_stamp_issue_is_the_most_harmful():
    steps = {"largest gap": 2_000_000, "largest step back": 3_000_000, "span": 99_000_000,
             "valid": 100}
    report = ProcessReport(100, {}, {}, 0, 0.0, {"duplicate": 4, "out of order": 2}, steps=steps)
    assert report.worst_stamp_issue == "2 out of order (up to 3 ms)"
    report = report._replace(stamps={"duplicate": 4, "out of order": 0})
    assert report.worst_stamp_issue == "4 duplicate"
    report = report._replace(stamps={"duplicate": 0, "out of order": 0})
    assert report.worst_stamp_issue == "none"                # 2 mean periods: no gap
    report = report._replace(steps={**steps, "largest gap": 6_000_000})
    assert report.worst_stamp_issue == "gap of 6 ms (6 periods)"


def test_a_rerun_skips_finished_outputs_and_overwrite_redoes_them(tmp_path, puma, fleet,
                                                                  cluster):
    inputs, out = fleet[0], tmp_path / "out"
    process_fleet(find_bags([str(inputs)], out), out, puma, OPTIONS, FleetOptions(workers=1))
    before = {p.name: p.stat().st_ino for p in out.iterdir()}
    again = process_fleet(find_bags([str(inputs)], out), out, puma, OPTIONS,
                          FleetOptions(scheduler=cluster))
    check_outcomes(again, fleet, out, statuses=("skipped",))
    assert {p.name: p.stat().st_ino for p in out.iterdir()} == before     # untouched
    redone = process_fleet(find_bags([str(inputs)], out), out, puma,
                           ProcessOptions(**{**OPTIONS.__dict__, "overwrite": True}),
                           FleetOptions(scheduler=cluster))
    check_outcomes(redone, fleet, out)
    assert all(out.joinpath(n).stat().st_ino != before[n] for n in GOOD)   # written anew


def test_a_bag_failing_mid_way_leaves_no_output_and_the_rerun_completes_it(
        tmp_path, puma, fleet, cluster, monkeypatch):
    inputs, out = fleet[0], tmp_path / "out"
    chunk = _Processor.chunk

    def failing(self, times, raws):
        if self.path.name == "delta" and self.read >= 128:   # two chunks written already
            assert any(out.glob(".delta.partial-*/delta/*.mcap"))
            raise RuntimeError("disk gone")
        chunk(self, times, raws)
    monkeypatch.setattr(_Processor, "chunk", failing)        # the cluster's workers are threads
    outcomes = {o.name: o for o in process_fleet(find_bags([str(inputs)], out), out, puma,
                                                 OPTIONS, FleetOptions(scheduler=cluster))}
    assert outcomes["delta"].status == "failed"
    assert outcomes["delta"].error == "internal error: RuntimeError: disk gone"
    assert sorted(p.name for p in out.iterdir()) == ["alpha", "beta", "gamma"]
    assert [o.status for n, o in sorted(outcomes.items())] == ["done", "done", "failed", "failed",
                                                               "done"]
    monkeypatch.setattr(_Processor, "chunk", chunk)
    rerun = process_fleet(find_bags([str(inputs)], out), out, puma, OPTIONS,
                          FleetOptions(scheduler=cluster))
    check_outcomes(rerun, fleet, out, statuses=("done", "skipped"))
    assert [o.status for o in rerun if o.name in GOOD] == ["skipped", "skipped", "done", "skipped"]


def test_an_interrupted_run_leaves_finished_outputs_complete_and_no_other(
        tmp_path, puma, fleet):
    inputs, out = fleet[0], tmp_path / "out"

    seen = []

    def interrupt(outcome):                 # Ctrl-C after the second bag
        seen.append(outcome.name)
        if len(seen) == 2:
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        process_fleet(find_bags([str(inputs)], out), out, puma, OPTIONS, FleetOptions(workers=1),
                      on_done=interrupt)
    finished = sorted(n for n in seen if n != "broken")
    assert sorted(p.name for p in out.iterdir()) == finished
    assert all(same_bag(out / n, fleet[1] / n) for n in finished)
    rerun = process_fleet(find_bags([str(inputs)], out), out, puma, OPTIONS,
                          FleetOptions(workers=1))
    check_outcomes(rerun, fleet, out, statuses=("done", "skipped"))


def test_a_killed_worker_fails_only_what_it_was_running(tmp_path, puma, monkeypatch):
    """A worker process killed outright on a loopback cluster: its bags fail, nothing is left."""
    import dask
    import distributed
    inputs, out = tmp_path / "in", tmp_path / "out"
    inputs.mkdir()
    for k in range(3):
        write_joint_states(inputs / f"run{k}", puma.joint_names, *motion(puma, 4000, k))
    options = ProcessOptions(namespace="", chunk_size=100)
    count, killed = fleet_module._Progress.count, []
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), \
            loopback_cluster(processes=True, n_workers=1) as cluster, \
            distributed.Client(cluster) as client:
        pid = next(iter(client.run(os.getpid).values()))

        def kill_once(self, k, n):
            if not killed:
                killed.append(k)
                os.kill(pid, signal.SIGKILL)                 # mid-bag: its first chunk is done
            count(self, k, n)
        monkeypatch.setattr(fleet_module._Progress, "count", kill_once)
        outcomes = process_fleet(find_bags([str(inputs)], out), out, puma, options,
                                 FleetOptions(scheduler=cluster.scheduler_address))
    # The kill comes with a bag's first progress event, which may reach this process after the
    # worker finished that bag and started the next: which bags fail depends on the timing.
    failed = [o for o in outcomes if o.status == "failed"]
    assert killed and failed and all("KilledWorker" in o.error for o in failed)
    assert all(o.status == "done" for o in outcomes if o not in failed)
    assert sorted(p.name for p in out.iterdir()) == sorted(
        o.name for o in outcomes if o.status == "done")      # no partial output, no temporary
    monkeypatch.setattr(fleet_module._Progress, "count", count)
    rerun = process_fleet(find_bags([str(inputs)], out), out, puma, options,
                          FleetOptions(workers=1))
    assert all(o.status in ("done", "skipped") for o in rerun)
    (tmp_path / "sequential").mkdir()
    for o in rerun:
        process_bag(inputs / o.name, tmp_path / "sequential" / o.name, puma, options)
        assert same_bag(out / o.name, tmp_path / "sequential" / o.name)


# ------------------------------------------------------------------------------- which bags
def test_a_task_run_again_after_its_result_was_lost_gives_its_output(tmp_path, puma, fleet):
    # What the scheduler does when a worker dies holding a finished bag's unsent result.
    source = fleet[0] / "alpha"
    job = fleet_module._Job(str(source), str(tmp_path / "alpha"), puma, OPTIONS)
    first = fleet_module._process_one(job, lambda n: None)
    again = fleet_module._process_one(job, lambda n: None)
    assert first.status == again.status == "done"
    assert again.report == first.report._replace(seconds=0.0)
    redo = job._replace(options=ProcessOptions(namespace="", chunk_size=64, overwrite=True))
    assert fleet_module._process_one(redo, lambda n: None).status == "done"   # written again


def test_bags_are_found_in_directories_globs_and_files_each_once(tmp_path, puma, fleet):
    inputs = fleet[0]
    names = ["alpha", "beta", "broken", "delta", "gamma.mcap"]
    assert [p.name for p in find_bags([str(inputs)])] == names
    found = find_bags([str(inputs / "*a"), str(inputs / "gamma.mcap"), str(inputs / "alpha")])
    assert [p.name for p in found] == ["alpha", "beta", "delta", "gamma.mcap"]
    assert find_bags([str(tmp_path / "missing")]) == [tmp_path / "missing"]   # fails as a bag
    with pytest.raises(BagError, match=r"\*\.db3: no bag matches"):
        find_bags([str(inputs / "*.db3")])
    (tmp_path / "empty").mkdir()                             # no bags: fails as a bag
    assert find_bags([str(tmp_path / "empty")]) == [tmp_path / "empty"]
    # outputs inside the input directory are not taken for inputs by a rerun
    out = tmp_path / "all"
    shutil.copytree(inputs, out)
    (out / "processed").mkdir()
    process_bag(out / "alpha", out / "processed" / "alpha", puma, OPTIONS)
    assert [p.name for p in find_bags([str(out / "*")], out / "processed")] == names
    assert [p.name for p in find_bags([str(out / "processed")])] == ["alpha"]


def test_a_bag_without_metadata_is_no_directory_of_bags(tmp_path, puma):
    write_joint_states(tmp_path / "run", puma.joint_names, *motion(puma, 20, 1))
    (tmp_path / "run" / "metadata.yaml").unlink()            # a cut recording: bag recover
    assert not fleet_module.is_collection(str(tmp_path / "run"))
    assert not fleet_module.is_collection(str(tmp_path))     # holds no bag
    write_joint_states(tmp_path / "other", puma.joint_names, *motion(puma, 20, 2))
    assert fleet_module.is_collection(str(tmp_path))
    assert not fleet_module.is_collection(str(tmp_path / "other"))
    assert fleet_module.is_collection(str(tmp_path / "ot*"))


def test_outputs_are_named_after_their_bags_never_twice_never_over_an_input(tmp_path):
    sources = [tmp_path / "a" / "run", tmp_path / "b" / "run.mcap", tmp_path / "c" / "x.db3"]
    with pytest.raises(BagError, match=r"the same output: run: .*a/run, .*b/run\.mcap"):
        output_names(sources, tmp_path / "out")
    assert output_names(sources[1:], tmp_path / "out") == [tmp_path / "out" / "run",
                                                           tmp_path / "out" / "x"]
    with pytest.raises(BagError, match="would replace its input"):
        output_names([tmp_path / "a" / "run"], tmp_path / "a")


def test_the_summary_table_and_csv_hold_the_figures(tmp_path, puma, fleet):
    import csv
    inputs, out = fleet[0], tmp_path / "out"
    outcomes = process_fleet(find_bags([str(inputs)], out), out, puma, OPTIONS,
                             FleetOptions(workers=1))
    table = format_summary(outcomes, puma.joint_names).splitlines()
    assert table[1].split()[:5] == ["bag", "status", "joint", "st.", "dropped"]
    beta = next(line for line in table if line.startswith("beta"))
    assert fleet[2]["beta"].rejected == {"residual: stamps not increasing": 1}
    assert beta.split()[:6] == ["beta", "done", "250", "1", "2", "duplicate"]
    assert beta.split()[6] == f"{fleet[2]['beta'].residual_rms['joint1']:.4g}"
    assert next(line for line in table if line.startswith("broken")).split() == [
        "broken", "failed", "-", "-", "-"]
    paths = write_summary(outcomes, puma.joint_names, out)
    with open(paths[0], newline="") as stream:
        rows = list(csv.DictReader(stream))
    expected = summary_rows(outcomes, puma.joint_names)
    assert [r["bag"] for r in rows] == [str(p) for p in find_bags([str(inputs)])]
    for row, want in zip(rows, expected):
        assert row["status"] == want["status"] and row["error"] == (want["error"] or "")
        for name in puma.joint_names:
            value = want[f"residual_rms_{name}"]
            assert row[f"residual_rms_{name}"] == ("" if value is None else repr(value))
            assert value is None or float(row[f"residual_rms_{name}"]) == value   # exact
    assert paths == [out / "process_summary.csv"] and not list(out.glob(".process_summary*"))


# ------------------------------------------------------------------- Ctrl-C and dead workers
def fleet_command(inputs, out, *extra, env=None):
    """Start ``robot-dynamics bag process INPUTS OUT`` on 2 local workers, in its own process."""
    import subprocess
    import sys
    command = [sys.executable, "-m", "robot_dynamics_ros.commands.cli", "bag", "process",
               str(inputs), str(out), "--robot", "puma560", "--workers", "2", "--no-progress",
               *extra]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})}, preexec_fn=default_ctrl_c)


def default_ctrl_c():
    """
    Give the fleet's process the default SIGINT (Python's KeyboardInterrupt), as a terminal does.

    A shell's background job (``make test &``, a CI runner's) starts with SIGINT ignored, which
    its children inherit and Python then keeps: the fleet would ignore the test's Ctrl-C and
    finish (exit code 0), or wait on its workers.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_stops_a_fleet_at_once_keeping_only_finished_outputs(tmp_path, puma):
    import time
    inputs, out = tmp_path / "in", tmp_path / "out"
    inputs.mkdir()
    write_joint_states(inputs / "a_small", puma.joint_names, *motion(puma, 200, 1))
    for k, name in enumerate(("b_big", "c_big", "d_big")):
        write_joint_states(inputs / name, puma.joint_names, *motion(puma, 40_000, k))
    run = fleet_command(inputs, out)
    try:
        deadline = time.monotonic() + 300                  # a bound, for a loaded machine
        while time.monotonic() < deadline and run.poll() is None and not (
                (out / "a_small").is_dir() and list(out.glob(".*_big.partial-*"))):
            time.sleep(0.05)
        assert run.poll() is None, run.communicate()
        family = descendants(run.pid)                      # the forkserver and the workers
        assert len(family) >= 3, family
        run.send_signal(signal.SIGINT)
        interrupted = time.monotonic()
        run.wait(10)                                       # the aim is 2 s; 10 s: loaded CI
        stopped = time.monotonic() - interrupted
    finally:
        run.kill()
        run.wait()
    assert run.returncode == 130 and stopped < 10, (run.returncode, stopped)
    error = run.stderr.read()
    assert "Traceback" not in error and "interrupted;" in error, error
    assert "leaked" not in error, error                 # the killed workers left no semaphore
    left = sorted(p.name for p in out.iterdir())
    assert "a_small" in left and not [n for n in left if "partial" in n], left
    (tmp_path / "sequential").mkdir()
    options = ProcessOptions()
    for name in left:                                     # finished: complete, as one bag's
        process_bag(inputs / name, tmp_path / "sequential" / name, puma, options)
        assert same_bag(out / name, tmp_path / "sequential" / name), name
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and [p for p in family if alive(p)]:
        time.sleep(0.05)
    assert not [p for p in family if alive(p)]            # no worker left behind


def descendants(pid):
    """Return the process ids under ``pid`` (Linux /proc)."""
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        for children in glob.glob(f"/proc/{parent}/task/*/children"):
            with open(children) as stream:
                todo += [int(c) for c in stream.read().split()]
        found += [] if parent == pid else [parent]
    return found


def alive(pid):
    """Tell whether process ``pid`` runs (a zombie does not)."""
    try:
        with open(f"/proc/{pid}/stat") as stream:
            return stream.read().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("once", [True, False])
def test_a_killed_worker_process_is_retried_once_then_reported_for_its_bag_alone(
        tmp_path, fleet, once):
    import csv
    out, marker = tmp_path / "out", tmp_path / "died_once"
    run = fleet_command(fleet[0], out, "--namespace", "", env={
        fleet_module.TEST_EXIT: "delta" + (f"@{marker}" if once else "")})
    stdout, stderr = run.communicate(timeout=600)
    with open(out / "process_summary.csv", newline="") as stream:
        rows = {os.path.basename(r["output"]): r for r in csv.DictReader(stream)}
    assert rows["delta"]["status"] == ("done" if once else "failed"), stderr
    assert marker.exists() == once
    if not once:
        assert "its worker process died (exit code 70), 2 times" in rows["delta"]["error"]
        assert f"{fleet[0] / 'delta'}: its worker process died" in stderr
    assert {n: r["status"] for n, r in rows.items() if n != "delta"} == {
        "alpha": "done", "beta": "done", "gamma": "done", "broken": "failed"}
    assert run.returncode == 1                           # the broken bag, and delta if lost
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [n for n, r in rows.items() if r["status"] == "done"] + ["process_summary.csv"])
