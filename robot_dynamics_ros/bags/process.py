"""
``bag process``: offline, what the nodes would publish for a bag's joint states and references.

    robot-dynamics bag process run_bag out_bag --robot puma560 \
        [--outputs gravity,feedforward,residual]

Reads sensor_msgs/JointState (``joint_states_topic``) and trajectory_msgs/JointTrajectory
(``reference_topic``) in recorded order, without DDS, and writes a new bag with, for every valid
joint state and with its header stamp and recorded time:

* ``gravity_effort`` -- what gravity_compensation_node publishes: g(q) (Siciliano et al. 2009, eq.
  7.39), plus F_v qd + F_s sgn(qd) with ``friction_compensation``, within the effort limits as the
  node's
  ``effort_limit_policy`` (clamp by default; counted per joint in the report);
* ``feedforward_effort`` -- what inverse_dynamics_node publishes while a reference is active:
  the reference sampled as joint_trajectory_controller samples it (``core.Reference``: start
  stamp, lead-in from the first measured state, last point held) at the joint state's header
  stamp, as the node samples it (a state stamped zero: at its recorded time, which is the
  node's clock when the bag is played with ``--clock``); effort
  RNEA(q_ref, qd_ref, qdd_ref) (``mode`` feedforward) or RNEA(q, qd, qdd_ref + Kd e_dot + Kp e)
  (computed_torque), within the effort limits as for gravity_effort, position / velocity =
  q_ref, qd_ref.  A reference message replaces the
  previous one when it is recorded; an empty one clears it; one that ends in the past is ignored;
* ``external_effort`` (output ``observer``) -- where the message has effort and velocity: the
  external-torque observer's residual, what external_torque_observer_node publishes for the same
  messages (``observer_output.py``; ``observer_options``, effort as the joint torque);
* ``effort_residual`` -- where the message has effort and velocity: measured effort minus the
  model torque of the measured motion, RNEA(q, qd, qdd) with qdd the central difference of the
  measured velocity over the header stamps (one-sided at the ends): the signal users watch for
  collisions and model errors.  Offline only (no node publishes it).

Messages are checked as the nodes check them (``joint_states``) and the invalid ones are dropped
and counted; a bag none of whose joint states match the robot is refused.  The dynamics run on
whole chunks (the core's batched RNEA), decoding and encoding on numpy arrays
(``messages.cdr``), so memory stays bounded by the chunk size and the dynamics do not dominate.
The output is written to a temporary directory and renamed when complete.
"""
from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
from rosbags.interfaces import (Qos, QosDurability, QosHistory, QosLiveliness, QosReliability,
                                QosTime)

from ..core import Reference, RobotModel, gravity_torques, rnea
from ..core.control import (DEFAULT_KD, DEFAULT_KP, MODES, POLICIES, EffortLimiter, Gains,
                            TorqueLaw, effective_limits, holding_torques)
from ..core.errors import BagError, RobotDynamicsError
from ..core.observer import ObserverOptions
from ..messages.cdr import JOINT_STATE, JointStateTemplate
from ..messages.conversions import JointOrder, MessageRejected, trajectory_from_msg
from ..messages.topics import DEFAULT_NAMESPACE
from . import observer_output
from .joint_states import CHUNK, JointStateChecker, message_error, progress_bar
from .reader import MAX_METADATA_BYTES, open_bag
from .storage import DEFAULT_STORAGE, check_output, output_bag
from .types import deserialize, typestore

REFERENCE = "trajectory_msgs/msg/JointTrajectory"
OUTPUT_TOPICS = {"gravity": "gravity_effort", "feedforward": "feedforward_effort",
                 "residual": "effort_residual", "observer": observer_output.TOPIC}
OUTPUT_FIELDS = {"gravity": ("effort",), "feedforward": ("position", "velocity", "effort"),
                 "residual": ("effort",), "observer": observer_output.FIELDS}
DEFAULT_REFERENCE = f"/{DEFAULT_NAMESPACE}/reference_trajectory"
# What the nodes' publishers offer (KEEP_LAST 10, reliable, volatile), recorded with the outputs.
_NEVER = QosTime(sec=9223372036, nsec=854775807)
NODE_QOS = Qos(QosHistory.KEEP_LAST, 10, QosReliability.RELIABLE, QosDurability.VOLATILE,
               _NEVER, _NEVER, QosLiveliness.AUTOMATIC, _NEVER, False)


@dataclass(frozen=True)
class ProcessOptions:
    """
    How ``process_bag`` processes a bag (the command line's options; see the module docstring).

    ``outputs``: any of "gravity", "feedforward", "residual", "observer" (None: gravity and
    residual, and feedforward when the bag has the reference topic; asking for feedforward
    without it is an error).  Output topics are ``<namespace>/<output topic>``; the defaults are
    the topics of the launch file's defaults (joint states on /joint_states, the rest under
    /robot_dynamics).
    ``kp``, ``kd``: gains of computed_torque mode (one, or one per joint in model order).
    ``skip_bad``: skip and count messages whose bytes are no message of their type instead of
    failing on the first (messages a node would refuse are always dropped and counted).
    ``effort_limit_policy``: the torque nodes' (clamp, warn, off) for the gravity and
    feedforward outputs.  ``observer``: the ``core.observer.ObserverOptions`` of the "observer"
    output (None: the defaults, those of external_torque_observer_node).
    """

    outputs: tuple | None = None
    joint_states_topic: str = "/joint_states"
    reference_topic: str = DEFAULT_REFERENCE
    namespace: str = DEFAULT_NAMESPACE
    mode: str = "feedforward"
    kp: tuple | float | None = None
    kd: tuple | float | None = None
    friction_compensation: bool = False
    storage: str = DEFAULT_STORAGE
    overwrite: bool = False
    chunk_size: int = CHUNK
    progress: bool = False
    skip_bad: bool = False
    effort_limit_policy: str = "clamp"
    observer: ObserverOptions | None = None

    def check(self):
        """Refuse (BagError) an option out of range, before any bag is opened."""
        if self.mode not in MODES:
            raise BagError(f"mode: '{self.mode}' is not one of {list(MODES)}")
        if self.effort_limit_policy not in POLICIES:
            raise BagError(f"effort_limit_policy: '{self.effort_limit_policy}' is not one of "
                           f"{list(POLICIES)}")
        if self.chunk_size < 2:
            raise BagError(f"chunk_size: must be >= 2, got {self.chunk_size}")
        unknown = [o for o in self.outputs or () if o not in OUTPUT_TOPICS]
        if unknown or self.outputs == ():
            raise BagError(f"outputs: {unknown or 'none given'}; choose from "
                           f"{list(OUTPUT_TOPICS)}")


FIGURES_KEY = "robot_dynamics.process"     # the output bag's custom_data entry of the figures


class ProcessReport(NamedTuple):
    """What ``process_bag`` did (plain data: picklable, comparable)."""

    joint_states: int               # joint_states messages read
    written: dict                   # output topic -> messages written
    rejected: dict                  # reason -> messages dropped (a node's checks, skipped damage)
    references: int                 # reference messages applied
    seconds: float
    stamps: dict                    # "duplicate", "out of order": header stamps of valid states
    limited: dict = {}              # output topic -> {joint: commands above its effort limit}
    residual_rms: dict = {}         # joint -> RMS of effort_residual (None: no residual written)
    steps: dict = {}                # "largest gap", "largest step back", "span" (ns), "valid"

    def figures(self) -> dict:
        """
        Return the report without its timing, as JSON-able plain data.

        What ``process_bag`` stores in the output bag's metadata (custom_data ``FIGURES_KEY``):
        the same input, model and options give the same figures, so a fleet run that skips a
        finished output reads them back from it (``ProcessReport.from_figures``).
        """
        fields = self._asdict()
        del fields["seconds"]
        return fields

    @classmethod
    def from_figures(cls, figures: dict, seconds: float = 0.0) -> "ProcessReport":
        """Return the report of ``figures`` (as ``figures()`` made them)."""
        return cls(**{**figures, "seconds": seconds})

    @property
    def worst_stamp_issue(self) -> str:
        """
        Say in a few words what is worst about the valid joint states' header stamps.

        In order of harm: stamps going back (the central differences of the residual lose those
        rows), repeated stamps (likewise), then a gap over ``GAP_PERIODS`` mean periods
        (messages lost while recording); "none" otherwise.
        """
        ms = 1e-6
        if self.stamps.get("out of order"):
            return (f"{self.stamps['out of order']} out of order (up to "
                    f"{self.steps['largest step back'] * ms:.3g} ms)")
        if self.stamps.get("duplicate"):
            return f"{self.stamps['duplicate']} duplicate"
        valid, gap = self.steps.get("valid", 0), self.steps.get("largest gap", 0)
        if valid > 2 and gap > GAP_PERIODS * self.steps["span"] / (valid - 1):
            return f"gap of {gap * ms:.4g} ms ({gap * (valid - 1) / self.steps['span']:.0f} " \
                   "periods)"
        return "none"


GAP_PERIODS = 5.0                   # a step between stamps beyond this many mean periods: a gap


def read_figures(target) -> ProcessReport | None:
    """
    Return the report ``process_bag`` stored in the output bag ``target`` (seconds 0).

    None if the bag holds none (not written by ``process_bag``, or by an older version) or its
    metadata cannot be read.
    """
    import yaml
    path = Path(target) / "metadata.yaml"
    try:
        if path.stat().st_size > MAX_METADATA_BYTES:
            return None
        info = yaml.safe_load(path.read_text())["rosbag2_bagfile_information"]
        text = (info.get("custom_data") or {}).get(FIGURES_KEY)
        return ProcessReport.from_figures(json.loads(text)) if text else None
    except (OSError, yaml.YAMLError, KeyError, TypeError, AttributeError, ValueError):
        return None


def process_bag(source, target, model: RobotModel, options: ProcessOptions = ProcessOptions(),
                on_progress=None) -> ProcessReport:
    """
    Process bag ``source`` into the new bag ``target`` (see the module docstring).

    A pure function of its arguments (the bag, the model and :class:`ProcessOptions`) apart from
    writing ``target``, whose metadata also holds the report's figures (custom_data
    ``FIGURES_KEY``, JSON).  ``on_progress(count)``, if given, is called with the number of joint
    states handled after each chunk (a fleet's progress bar).  Raises BagError for an unusable
    bag, option or output.
    """
    started = time.perf_counter()
    options.check()
    if options.observer is not None:
        options.observer.checked(model)         # (InputError naming the option, before any I/O)
    check_output(target, options.overwrite)
    with open_bag(source) as bag:
        js_connections = bag.topic(options.joint_states_topic, JOINT_STATE)
        ref_connections = bag.topic(options.reference_topic, REFERENCE) \
            if bag.has_topic(options.reference_topic) else []
        requested = options.outputs
        if requested is None:
            requested = tuple(o for o in OUTPUT_TOPICS if o != "observer"
                              and (o != "feedforward" or ref_connections))
        if "feedforward" in requested and not ref_connections:
            raise BagError(f"bag {bag.path}: no topic '{options.reference_topic}', which the "
                           "feedforward output needs (its topics: "
                           f"{sorted({c.topic for c in bag.connections})})")
        topic = js_connections[0].topic
        bar = progress_bar(sum(c.msgcount for c in js_connections), f"processing {topic}",
                           options.progress)
        prefix = "/" + options.namespace.strip("/") if options.namespace.strip("/") else ""
        try:
            with output_bag(target, options.storage, options.overwrite) as writer:
                channels = {o: writer.add_connection(f"{prefix}/{OUTPUT_TOPICS[o]}", JOINT_STATE,
                                                     typestore=typestore(),
                                                     offered_qos_profiles=[NODE_QOS])
                            for o in requested}
                processor = _Processor(model, writer, channels, options, bag.path, topic)
                _run(bag, processor, js_connections, ref_connections, options.chunk_size,
                     _Progress(bar, on_progress))
                written = {channels[o].topic: processor.written[o] for o in channels}
                limited = {channels[o].topic: {j: c for j, c in limiter.report().counts.items()
                                               if c}
                           for o, limiter in processor.limiters.items()}
                report = ProcessReport(processor.read, written, processor.rejected,
                                       processor.references, 0.0, processor.stamp_issues,
                                       {topic: counts for topic, counts in limited.items()
                                        if counts},
                                       processor.residual_rms(), processor.steps)
                writer.set_custom_data(FIGURES_KEY, json.dumps(report.figures()))
        finally:
            bar.close()
    return report._replace(seconds=time.perf_counter() - started)


class _Progress:
    """The bar of one bag and the caller's ``on_progress``, told the same counts."""

    def __init__(self, bar, on_progress):
        self.bar, self.on_progress = bar, on_progress

    def update(self, count: int):
        self.bar.update(count)
        if self.on_progress is not None and count:
            self.on_progress(count)


def _run(bag, processor, js_connections, ref_connections, chunk_size: int, bar):
    """Feed the bag's joint states (in chunks) and references (one by one) in recorded order."""
    reference_ids = {c.id for c in ref_connections}
    times, raws = [], []

    def flush():
        processor.chunk(times, raws)
        bar.update(len(raws))
        times.clear()
        raws.clear()
    for connection, stamp, raw in bag.messages(js_connections + ref_connections):
        if connection.id in reference_ids:
            flush()
            processor.reference_message(raw, stamp)
            continue
        times.append(stamp)
        raws.append(raw)
        if len(raws) == chunk_size:
            flush()
    flush()
    processor.finish()


class _Processor:
    """The state of one processing run: the active reference, the residual's last rows."""

    def __init__(self, model, writer, channels, options: ProcessOptions, path, topic):
        self.model, self.writer, self.channels = model, writer, channels
        self.mode, self.friction = options.mode, options.friction_compensation
        self.skip_bad, self.path, self.topic = options.skip_bad, path, topic
        self.law = TorqueLaw(options.mode, Gains(self._gains(options.kp, DEFAULT_KP, "kp"),
                                                 self._gains(options.kd, DEFAULT_KD, "kd")))
        self.limiters = self._limiters(options.effort_limit_policy)
        self.observer = None if "observer" not in channels else \
            observer_output.ObserverOutput(model, options.observer or ObserverOptions())
        self.checker = JointStateChecker(model.joint_names)
        self.templates = {o: JointStateTemplate(model.joint_names, OUTPUT_FIELDS[o])
                          for o in channels}
        self.reference: Reference | None = None
        self.read, self.valid, self.references, self.reference_read = 0, 0, 0, 0
        self.rejected: dict = {}
        self.stamp_issues = {"duplicate": 0, "out of order": 0}
        self.steps = {"largest gap": 0, "largest step back": 0, "span": 0, "valid": 0}
        self._last_stamp = None             # header stamp of the last valid joint state
        self._stamp_range = None            # (first, last) of the valid header stamps
        self._residual_squares = np.zeros(model.n)     # sum of squared residuals per joint
        self._residual_rows = 0
        self.written = {o: 0 for o in channels}
        self.name_problem = ""
        # residual: rows held back until the next one is known (central differences)
        self._before = None                 # (stamp, qd) of the row before the held one
        self._held = None                   # (time, stamp, q, qd, effort) of the held row

    def _gains(self, value, default, name) -> np.ndarray:
        n = self.model.n
        gains = np.full(n, default) if value is None else np.asarray(value, dtype=float)
        if gains.ndim == 0:
            gains = np.full(n, float(gains))
        if gains.shape != (n,) or not np.isfinite(gains).all() or (gains < 0).any():
            raise BagError(f"{name}: expected {n} finite gains >= 0, got "
                           f"{np.ravel(value).tolist()}")
        return gains

    def _reject(self, reason: str, count: int):
        if count:
            self.rejected[reason] = self.rejected.get(reason, 0) + int(count)

    # -- references ---------------------------------------------------------------------------
    def reference_message(self, raw, now: int):
        """Apply a reference message recorded at ``now`` as inverse_dynamics_node does."""
        index, self.reference_read = self.reference_read, self.reference_read + 1
        try:
            msg = deserialize(raw, REFERENCE)
        except Exception as exc:  # noqa: BLE001 -- rosbags' many decoding errors
            if self.skip_bad:
                self._reject("reference: malformed", 1)
                return
            raise message_error(self.path, "reference", index, now,
                                f"{len(raw)} bytes that are not a serialized {REFERENCE} "
                                f"({type(exc).__name__}: {exc})") from None
        if len(msg.points) == 0:
            self.reference = None
            return
        try:
            trajectory = trajectory_from_msg(msg, JointOrder(self.model.joint_names))
            stamp = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
            self.reference = Reference(trajectory, stamp, now)
            self.references += 1
        except (MessageRejected, RobotDynamicsError):
            self._reject("reference", 1)                # the node keeps the old one

    # -- joint states -------------------------------------------------------------------------
    def chunk(self, times: list, raws: list):
        """Process joint states recorded at ``times`` (ns) and write the outputs."""
        if not raws:
            return
        first, self.read = self.read, self.read + len(raws)
        times = np.array(times, dtype=np.int64)
        checked = self.checker.check(raws)
        stamp, q, qd, effort, ok = checked.stamp, checked.position, checked.velocity, \
            checked.effort, checked.ok
        for problem in checked.problems:
            if problem.kind == "malformed" and not self.skip_bad:
                k = int(problem.rows[0])
                raise message_error(self.path, self.topic, first + k, int(times[k]),
                                    problem.text)
            self._reject(problem.kind, problem.rows.size)
            if problem.kind == "joint names" and not self.name_problem:
                self.name_problem = problem.text
        self.valid += int(ok.sum())
        if self.valid == 0 and self.name_problem:
            raise BagError(f"bag {self.path}: the joint names of '{self.topic}' do not match "
                           f"robot '{self.model.name}': {self.name_problem}")
        self._count_stamp_issues(stamp[ok])
        has_velocity = np.isfinite(qd).all(axis=1)
        if "gravity" in self.channels:
            self._gravity(times, stamp, q, qd, ok, has_velocity)
        if "feedforward" in self.channels:
            self._feedforward(times, stamp, q, qd, ok, has_velocity)
        if "residual" in self.channels:
            rows = ok & has_velocity & np.isfinite(effort).all(axis=1)
            self._reject("residual: no velocity or effort", np.sum(ok & ~rows))
            self._residual(times[rows], stamp[rows], q[rows], qd[rows], effort[rows])
        if "observer" in self.channels:
            rows = ok & has_velocity & np.isfinite(effort).all(axis=1)
            self._observer(times[rows], stamp[rows], q[rows], qd[rows], effort[rows])

    def _count_stamp_issues(self, stamp: np.ndarray):
        """Count header stamps equal to (duplicate) or before (out of order) the previous one."""
        if stamp.size == 0:
            return
        previous = np.r_[stamp[0] if self._last_stamp is None else self._last_stamp, stamp[:-1]]
        step = stamp - previous
        if self._last_stamp is None:
            step = step[1:]
        self.stamp_issues["duplicate"] += int(np.sum(step == 0))
        self.stamp_issues["out of order"] += int(np.sum(step < 0))
        self._last_stamp = int(stamp[-1])
        steps = self.steps
        if step.size:
            steps["largest gap"] = max(steps["largest gap"], int(step.max()))
            steps["largest step back"] = max(steps["largest step back"], int(-step.min()))
        low, high = int(stamp.min()), int(stamp.max())
        if self._stamp_range is not None:
            low, high = min(low, self._stamp_range[0]), max(high, self._stamp_range[1])
        self._stamp_range = (low, high)
        steps["span"], steps["valid"] = high - low, steps["valid"] + int(stamp.size)

    def residual_rms(self) -> dict:
        """Return the RMS of the residuals written, per joint (None where none was written)."""
        if self._residual_rows == 0:
            return {name: None for name in self.model.joint_names}
        return {name: math.sqrt(float(square) / self._residual_rows)
                for name, square in zip(self.model.joint_names, self._residual_squares)}

    def _limiters(self, policy: str) -> dict:
        """Return the torque nodes' effort limiters of the gravity and feedforward outputs."""
        try:
            return {o: EffortLimiter(effective_limits(self.model), self.model.joint_names, policy)
                    for o in ("gravity", "feedforward") if o in self.channels}
        except RobotDynamicsError as exc:
            raise BagError(str(exc)) from None

    def _limited(self, output: str, tau):
        limiter = self.limiters.get(output)
        return tau if limiter is None else limiter.apply_array(tau)

    def _observer(self, times, stamp, q, qd, effort):
        """Write the observer's residual (``observer_output.py``) of the rows the node uses."""
        accepted, r = self.observer.rows(stamp, q, qd, effort)
        self._reject("observer: stamps not increasing", np.sum(~accepted))
        self._write("observer", times[accepted], stamp[accepted], effort=r[accepted])

    def _gravity(self, times, stamp, q, qd, ok, has_velocity):
        rows = ok & has_velocity if self.friction else ok
        self._reject("gravity: no velocity", np.sum(ok & ~rows))
        model = self.model
        tau = holding_torques(lambda q: gravity_torques(model, q), model, q[rows],
                              qd[rows] if self.friction else None)
        self._write("gravity", times[rows], stamp[rows], effort=self._limited("gravity", tau))

    def _feedforward(self, times, stamp, q, qd, ok, has_velocity):
        reference = self.reference
        if reference is None or not ok.any():
            return
        rows = ok & has_velocity if self.law.needs_velocity else ok
        self._reject("feedforward: no velocity", np.sum(ok & ~rows))
        if not rows.any():
            return
        first_velocity = qd[rows] if has_velocity[rows][0] else None
        at = np.where(stamp[rows] != 0, stamp[rows], times[rows])     # as inverse_dynamics_node
        valid, sample = reference.sample_many(at, q[rows], first_velocity)
        self._reject("clock", np.sum(~valid))
        index = np.flatnonzero(rows)[valid]
        q_ref, qd_ref, qdd_ref = (a[valid] for a in sample)
        model = self.model
        tau = self.law.torques(lambda *a: rnea(model, *a), q[index], qd[index], q_ref, qd_ref,
                               qdd_ref)
        self._write("feedforward", times[index], stamp[index],
                    effort=self._limited("feedforward", tau), position=q_ref,
                    velocity=qd_ref)

    def _residual(self, times, stamp, q, qd, effort):
        """Effort - RNEA(q, qd, qdd~) with qdd~ from central differences; one row held back."""
        if self._held is not None:
            h = self._held
            times, stamp = np.r_[h[0], times], np.r_[h[1], stamp]
            q, qd, effort = (np.vstack([h[k][None, :], a])
                             for k, a in ((2, q), (3, qd), (4, effort)))
        if times.size < 2:
            self._held = None if times.size == 0 else (times[0], stamp[0], q[0], qd[0], effort[0])
            return
        # rows 0..m-2 are written now; row m-1 waits for its successor
        s_prev = np.r_[self._before[0] if self._before else stamp[0], stamp[:-2]]
        qd_prev = np.vstack([self._before[1][None, :] if self._before else qd[:1], qd[:-2]])
        qdd = _difference(qd[1:] - qd_prev, stamp[1:] - s_prev)
        self._emit_residual(times[:-1], stamp[:-1], q[:-1], qd[:-1], qdd, effort[:-1])
        self._before = (stamp[-2], qd[-2])
        self._held = (times[-1], stamp[-1], q[-1], qd[-1], effort[-1])

    def _emit_residual(self, times, stamp, q, qd, qdd, effort):
        tau = effort - rnea(self.model, q, qd, np.where(np.isfinite(qdd), qdd, 0.0))
        good = np.isfinite(qdd).all(axis=1) & np.isfinite(tau).all(axis=1)
        self._reject("residual: stamps not increasing", np.sum(~good))
        self._residual_squares += np.sum(tau[good] ** 2, axis=0)
        self._residual_rows += int(np.sum(good))
        self._write("residual", times[good], stamp[good], effort=tau[good])

    def finish(self):
        """Write the held residual row (backward difference) and check that anything was valid."""
        if self._held is not None and self._before is not None:
            t, s, q, qd, effort = self._held
            qdd = _difference((qd - self._before[1])[None, :], np.array([s - self._before[0]]))[0]
            self._emit_residual(np.array([t]), np.array([s]), q[None, :], qd[None, :],
                                qdd[None, :], effort[None, :])
        if self.read and self.valid == 0:
            reasons = ", ".join(f"{k}: {v}" for k, v in self.rejected.items())
            raise BagError(f"bag {self.path}: none of the {self.read} messages on '{self.topic}' "
                           f"is usable for robot '{self.model.name}' ({reasons})"
                           + (f"; {self.name_problem}" if self.name_problem else ""))
        if self.read == 0:
            raise BagError(f"bag {self.path}: topic '{self.topic}' has no messages")

    def _write(self, output: str, times, stamp, **values):
        if times.size == 0:
            return
        finite = np.all([np.isfinite(v).all(axis=1) for v in values.values()], axis=0)
        self._reject(f"{output}: non-finite output", np.sum(~finite))
        if not finite.all():
            times, stamp = times[finite], stamp[finite]
            values = {k: v[finite] for k, v in values.items()}
        rows = self.templates[output].encode_many(stamp, **values)
        self.writer.write_rows(self.channels[output], times, rows)
        self.written[output] += len(rows)


def _difference(delta_qd: np.ndarray, delta_ns: np.ndarray) -> np.ndarray:
    """delta_qd / delta_t per row, NaN where the stamps do not increase (no numpy warning)."""
    out = np.full(delta_qd.shape, np.nan)
    step = delta_ns > 0
    out[step] = delta_qd[step] / (delta_ns[step] * 1e-9)[:, None]
    return out
