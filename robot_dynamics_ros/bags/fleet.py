"""
Fleets of bags: ``bag process`` on many bags in parallel on Dask, one output bag per input.

    robot-dynamics bag process runs/ 'archive/2026-*/*.mcap' extra_run processed/ --robot ur5e \
        [--workers N | --scheduler tcp://host:8786] [--overwrite]

Inputs are bag directories, bare ``.mcap`` / ``.db3`` files, directories holding bags, or glob
patterns (quoted, so that the shell leaves them; :func:`find_bags`); bag ``NAME`` (a bare file's
stem) becomes ``OUT_DIR/NAME``.  Every bag is one task of :class:`~.engine.Engine` (local
worker processes, or a Dask cluster), running ``process.process_bag`` exactly as the
single-bag command does, so each output is the one that command writes, bit for bit.

* **One bad bag fails alone**: its error (the single-bag command's one line) is its outcome and
  the others finish; the command then exits 1 and lists the failures.
* **Nothing half-written**: ``process_bag`` writes each output under a temporary name and
  renames it when complete, so an interrupted run (Ctrl-C, a worker killed) leaves finished
  outputs complete and no other; the temporary directories of killed workers are removed when
  the run ends, also after Ctrl-C (runs into one output directory at the same time are not
  supported).  Ctrl-C kills the local workers at once (``engine.py``); a local worker that dies
  has its bag run again once, then reported failed for that bag alone.
* **Reruns**: an existing output counts as finished and is skipped (``--overwrite`` redoes it);
  its figures are read back from its metadata (``process.read_figures``), so the summary of a
  rerun covers every bag.
* **Summary**: per bag, the joint states read, dropped messages, the worst stamp issue and the
  RMS of the effort residual per joint (:func:`format_summary`); the same figures as a CSV file
  (``OUT_DIR/process_summary.csv``; one row per bag, floats written exactly: no Parquet, whose
  writer, pyarrow, would be a 40 MB dependency for that).
"""
from __future__ import annotations

import csv
import glob
import multiprocessing
import os
import shutil
import traceback
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, NamedTuple

from ..core.errors import BagError, RobotDynamicsError, error_summary
from ..messages.cdr import JOINT_STATE
from ..messages.distro import bag_distribution
from .engine import Engine, TaskFailure
from .process import ProcessOptions, ProcessReport, process_bag, read_figures
from .reader import STORAGE_IDS

SUMMARY_NAME = "process_summary"
# what process_bag imports and loads when first called (rosbags' type store, the reference's
# message conversion, the compiled kernels): once, by the local workers' server, rather than by
# every worker
WORKER_MODULES = (f"rosbags.typesys.stores.{bag_distribution().rosbags_store}",
                  "robot_dynamics_ros.messages.conversions", "robot_dynamics_ros.bags.warm_worker")
_GLOB = set("*?[")
TEST_EXIT = "ROBOT_DYNAMICS_ROS_TEST_WORKER_EXIT"     # the tests' killed worker (_test_exit)


@dataclass(frozen=True)
class FleetOptions:
    """How the bags are spread: ``workers`` local processes, or a cluster's ``scheduler``."""

    workers: int | None = None          # None: the cores this process may use
    scheduler: str | None = None        # a dask.distributed scheduler's address
    progress: bool = False              # bars over bags and joint states (stderr)


class BagOutcome(NamedTuple):
    """What became of one bag: "done", "skipped" (output there before) or "failed"."""

    source: str
    target: str
    status: str
    report: ProcessReport | None        # None where failed (or skipped without figures)
    error: str = ""

    @property
    def name(self) -> str:
        return Path(self.target).name


# -- which bags --------------------------------------------------------------------------------
def is_bag(path: Path) -> bool:
    """Tell whether ``path`` is a bag: a directory with metadata.yaml, or a .mcap / .db3 file."""
    return (path / "metadata.yaml").is_file() or (path.is_file() and path.suffix in STORAGE_IDS)


def _bags_in(directory: Path) -> list[Path]:
    """Return the bags a directory holds (not a bag without metadata: its files are parts)."""
    entries = sorted(p for p in directory.iterdir() if not p.name.startswith("."))
    bags = [p for p in entries if is_bag(p)]
    if not any(p.is_dir() for p in bags) and any(
            p.stem == directory.name or p.stem.startswith(f"{directory.name}_") for p in bags):
        return []       # NAME/NAME.mcap, NAME/NAME_0.mcap...: a bag without its metadata.yaml
    return bags


def is_collection(argument: str) -> bool:
    """Tell whether an argument names several bags: a glob, or a directory that holds bags."""
    path = Path(argument)
    if not path.exists():
        return bool(_GLOB & set(argument))
    return path.is_dir() and not is_bag(path) and bool(_bags_in(path))


def find_bags(arguments, out_dir=None) -> list[Path]:
    """
    Return the bags that ``arguments`` name, in order, each once.

    A glob pattern gives its matches that are bags (sorted), a directory that is no bag the bags
    in it (sorted, not recursively), anything else itself (a path that does not exist fails
    alone as its bag).  Bags found by a pattern or in a directory are never inside ``out_dir``.
    """
    found: list[Path] = []
    out = Path(out_dir).resolve() if out_dir is not None else None
    for argument in arguments:
        if is_collection(argument):
            path = Path(argument)
            matches = _bags_in(path) if path.exists() else [
                Path(p) for p in sorted(glob.glob(argument)) if is_bag(Path(p))]
            matches = [p for p in matches if out is None or not p.resolve().is_relative_to(out)]
            if not matches:
                raise BagError(f"{argument}: no bag matches" if not path.exists() else
                               f"{argument}: holds no bags")
            found += matches
        else:
            found.append(Path(argument))
    unique, seen = [], set()
    for path in found:
        if path.resolve() not in seen:
            seen.add(path.resolve())
            unique.append(path)
    return unique


def output_names(sources, out_dir) -> list[Path]:
    """Return ``out_dir/NAME`` for every bag; refuse two bags of one name or an input as output."""
    out_dir = Path(out_dir)
    targets = [out_dir / (s.stem if s.suffix in STORAGE_IDS else s.name) for s in sources]
    by_name: dict = {}
    for source, target in zip(sources, targets):
        by_name.setdefault(target.name, []).append(str(source))
        if target.resolve() == source.resolve():
            raise BagError(f"output {target} would replace its input; choose another directory")
    twice = {name: paths for name, paths in by_name.items() if len(paths) > 1}
    if twice:
        raise BagError("bags of the same name would have the same output: " + "; ".join(
            f"{name}: {', '.join(paths)}" for name, paths in twice.items()))
    return targets


# -- processing ------------------------------------------------------------------------------
class _Job(NamedTuple):
    source: str
    target: str
    model: object
    options: ProcessOptions


def _process_one(job: _Job, count: Callable) -> BagOutcome:
    """
    Process one bag on a worker; its error is its outcome (the others go on).

    A cluster's scheduler runs a task again when the worker holding its result dies before the
    result was gathered: the output that first run completed (renamed only when complete)
    exists then, and is this bag's result, with the figures it stored.
    """
    _test_exit(job)
    _bars_local_to_this_process()
    if not job.options.overwrite and Path(job.target).exists():
        report = read_figures(job.target)
        if report is not None:
            return BagOutcome(job.source, job.target, "done", report)
    try:
        report = process_bag(job.source, job.target, job.model, job.options, on_progress=count)
    except RobotDynamicsError as exc:
        return BagOutcome(job.source, job.target, "failed", None, f"{error_summary(exc)}: {exc}")
    except Exception as exc:  # noqa: BLE001 -- a defect shown for its bag, not ending the fleet
        text = "".join(traceback.format_exception_only(exc)).strip()
        return BagOutcome(job.source, job.target, "failed", None, f"internal error: {text}")
    return BagOutcome(job.source, job.target, "done", report)


def _bars_local_to_this_process():
    """
    Give tqdm a thread lock in a worker: its bars never share a terminal with another process.

    The caller draws the fleet's bars from the counts its workers send.  tqdm's default lock also
    makes a multiprocessing lock, a named semaphore; a worker killed on Ctrl-C cannot remove it,
    and the resource tracker then warns of a "leaked semaphore" under the interrupted message.
    """
    import threading

    from tqdm import tqdm
    tqdm.set_lock(threading.RLock())


def _test_exit(job: _Job):
    """
    Die here as a killed worker would, if the tests ask it for this bag (``TEST_EXIT``).

    ``NAME`` dies on bag NAME every time; ``NAME@FILE`` only while FILE does not exist (it is
    created first: the retry then finishes).  Only in a worker process, never the caller's.
    """
    wanted = os.environ.get(TEST_EXIT, "")
    name, _, marker = wanted.partition("@")
    if not name or name != Path(job.target).name or \
            multiprocessing.parent_process() is None:
        return
    if marker:
        if Path(marker).exists():
            return
        Path(marker).touch()
    os._exit(70)


def process_fleet(sources, out_dir, model, options: ProcessOptions = ProcessOptions(),
                  fleet: FleetOptions = FleetOptions(),
                  on_done: Callable | None = None) -> list[BagOutcome]:
    """
    Process every bag of ``sources`` into ``out_dir`` (see the module docstring).

    ``sources``: bag paths (:func:`find_bags`); ``out_dir`` is created if needed.  Returns one
    :class:`BagOutcome` per bag, in order; ``on_done(outcome)`` is called as each is known.
    Raises BagError only for what concerns the whole run (names, the output directory).
    """
    options.check()
    sources = [Path(s) for s in sources]
    targets = output_names(sources, out_dir)
    _make_directory(Path(out_dir))
    outcomes: list = [None] * len(sources)
    jobs, where = [], []
    for i, (source, target) in enumerate(zip(sources, targets)):
        if target.exists() and not options.overwrite:
            outcomes[i] = _existing(source, target)
        else:
            jobs.append(_Job(str(source), str(target), model, replace(options, progress=False)))
            where.append(i)
    with Engine(fleet.workers, fleet.scheduler) as engine:       # connected before the bars
        progress = _Progress(fleet.progress, len(sources), jobs)
        for outcome in outcomes:
            if outcome is not None:
                progress.done(None, outcome)
                (on_done or (lambda _: None))(outcome)

        def finished(k, result):
            outcomes[where[k]] = _outcome(jobs[k], result)
            progress.done(k, outcomes[where[k]])
            if on_done is not None:
                on_done(outcomes[where[k]])
        try:
            engine.run(_process_one, jobs, finished, progress.count, preload=WORKER_MODULES)
        finally:
            progress.close()
            for target in targets:              # also after Ctrl-C: killed workers' files
                _remove_partials(target)
    return outcomes


def _make_directory(out_dir: Path):
    if out_dir.exists() and not out_dir.is_dir():
        raise BagError(f"output {out_dir} is not a directory")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BagError(f"output {out_dir}: cannot be created: {exc.strerror}") from None


def _existing(source: Path, target: Path) -> BagOutcome:
    """Return the outcome of a bag whose output exists: skipped, with its figures."""
    if not is_bag(target) or not target.is_dir():
        return BagOutcome(str(source), str(target), "failed", None,
                          f"output {target} exists and is not a bag directory; not replacing it")
    return BagOutcome(str(source), str(target), "skipped", read_figures(target))


def _outcome(job: _Job, result) -> BagOutcome:
    if isinstance(result, TaskFailure):
        return BagOutcome(job.source, job.target, "failed", None, result.reason)
    return result


def _remove_partials(target: Path):
    """Remove what a killed worker left while writing ``target`` (``storage.output_bag``)."""
    for partial in target.parent.glob(f".{glob.escape(target.name)}.partial-*"):
        shutil.rmtree(partial, ignore_errors=True)


class _Progress:
    """Bars over bags and joint states (stderr), fed from the engine's threads."""

    def __init__(self, enabled: bool, bags: int, jobs: list):
        import threading

        from tqdm import tqdm
        self.lock = threading.Lock()
        self.credited = [0] * len(jobs)             # joint states counted per job so far
        self.finished = set()                       # jobs done (their late counts are moot)
        total = sum(_joint_states(job) for job in jobs) if enabled else 0
        self.bags = tqdm(total=bags, desc="bags", unit="bag", disable=not enabled, position=0)
        self.messages = tqdm(total=total, desc="joint states", unit="msg", unit_scale=True,
                             disable=not enabled, position=1)

    def count(self, k: int, n: int):
        with self.lock:
            if k not in self.finished:
                self.credited[k] += n
                self.messages.update(n)

    def done(self, k, outcome: BagOutcome):
        with self.lock:
            self.bags.update(1)
            self.finished.add(k)
            if k is not None and outcome.report is not None:
                rest = outcome.report.joint_states - self.credited[k]
                self.credited[k] += rest
                self.messages.update(rest)

    def close(self):
        self.messages.close()
        self.bags.close()


def _joint_states(job: _Job) -> int:
    """Return the joint states a bag promises (0 if it cannot be opened: its task says why)."""
    from .reader import open_bag
    try:
        with open_bag(job.source) as bag:
            return sum(c.msgcount for c in bag.topic(job.options.joint_states_topic, JOINT_STATE))
    except (RobotDynamicsError, OSError):
        return 0


# -- the summary -------------------------------------------------------------------------------
def summary_rows(outcomes, joint_names) -> list[dict]:
    """Return one row of plain values per bag (the CSV's columns)."""
    rows = []
    for o in outcomes:
        r = o.report
        row = {"bag": o.source, "output": o.target, "status": o.status,
               "joint_states": r.joint_states if r else None,
               "dropped": sum(r.rejected.values()) if r else None,
               "references": r.references if r else None,
               "above_effort_limit": sum(sum(c.values()) for c in r.limited.values())
               if r else None,
               "duplicate_stamps": r.stamps.get("duplicate") if r else None,
               "out_of_order_stamps": r.stamps.get("out of order") if r else None,
               "largest_gap_ns": r.steps.get("largest gap") if r else None,
               "largest_step_back_ns": r.steps.get("largest step back") if r else None,
               "worst_stamp_issue": r.worst_stamp_issue if r else None}
        for name in joint_names:
            row[f"residual_rms_{name}"] = r.residual_rms.get(name) if r else None
        row["seconds"] = round(r.seconds, 3) if r and o.status == "done" else None
        row["error"] = o.error or None
        rows.append(row)
    return rows


def format_summary(outcomes, joint_names) -> str:
    """Return the table the command prints: per bag, counts, stamps and residual RMS per joint."""
    name_width = max([len("bag")] + [len(o.name) for o in outcomes])
    head = (f"{'bag':<{name_width}}  {'status':<7} {'joint st.':>10} {'dropped':>8}  "
            f"{'worst stamp issue':<28}" + "".join(f" {n[:10]:>10}" for n in joint_names))
    lines = [" " * (name_width + 59) + " residual RMS per joint [N m or N]", head]
    for o in outcomes:
        r = o.report
        if r is None:
            lines.append(f"{o.name:<{name_width}}  {o.status:<7} {'-':>10} {'-':>8}  {'-':<28}")
            continue
        rms = "".join(f" {'-':>10}" if r.residual_rms.get(n) is None else
                      f" {r.residual_rms[n]:>10.4g}" for n in joint_names)
        lines.append(f"{o.name:<{name_width}}  {o.status:<7} {r.joint_states:>10} "
                     f"{sum(r.rejected.values()):>8}  {r.worst_stamp_issue[:28]:<28}{rms}")
    return "\n".join(line.rstrip() for line in lines)


def write_summary(outcomes, joint_names, out_dir) -> list[Path]:
    """Write ``process_summary.csv`` in ``out_dir``, atomically; return its path in a list."""
    rows = summary_rows(outcomes, joint_names)
    path = Path(out_dir) / f"{SUMMARY_NAME}.csv"
    temporary = path.with_name(f".{path.name}.partial-{os.getpid()}")
    with open(temporary, "w", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=list(rows[0]) if rows else ["bag"])
        writer.writeheader()
        writer.writerows({k: ("" if v is None else repr(v) if isinstance(v, float) else v)
                          for k, v in row.items()} for row in rows)
    os.replace(temporary, path)
    return [path]
