"""
What a usable sensor_msgs/JointState is: the one set of checks of the nodes and of the bag tools.

ROS-free (numpy and the core's joint-name matching), so that ``bag process`` applies exactly
the checks a torque node applies (``conversions.joint_state_values``) to the same values, one
message at a time in a node and on whole arrays of messages in a bag:

* position and velocity have one entry per name (velocity may be empty), in that order;
* every joint the node needs is named exactly once (:class:`JointOrder`; extra joints are
  ignored), and a message names at most ``MAX_MESSAGE_JOINTS`` joints;
* the needed positions and velocities are finite and within ``MAX_JOINT_VALUE``: a value of
  1e308 rad is no measurement of a robot, and the dynamics would turn it into a torque
  (cos(1e308) is finite);
* velocity is there when the node needs it (computed-torque mode, friction compensation).

A message that fails raises :class:`MessageRejected` with a short ``kind`` (the reason counted
in the diagnostics and in ``bag process``'s report) and a text that says why.
"""
from __future__ import annotations

import math

import numpy as np

from ..core import InputError, joint_index

# A message naming more joints than this is refused before any per-joint work (whole-body
# joint_states of a humanoid carry ~100): one absurd message must not stall a node (issue 10, N5).
MAX_MESSAGE_JOINTS = 1024
# The one table of the bounds of what the nodes take in, one per quantity, used by every node
# (through :func:`check_bounded` and ``conversions.check_joint_values``) and by the bag tools.
# Beyond them a value is no measurement of or command for a robot: the dynamics would still turn
# 1e308 into a finite torque, or overflow into inf and NaN downstream (issue 31: O2, S1).
INPUT_BOUNDS = {
    # a position [rad, m], velocity, acceleration or effort [N m, N] in joint_states, an effort
    # command, a reference trajectory, a service request, an applied joint torque
    "joint value": 1e6,
    "force": 1e6,           # [N] a wrench's force (the simulator's applied_wrench)
    "moment": 1e6,          # [N m] a wrench's moment
    # [s] how far a header stamp may lie ahead of the receiving node's clock (the observer):
    # a stamp further ahead is no time of a sample that has been taken (issue 31: O1)
    "stamp ahead": 1.0,
}
MAX_JOINT_VALUE = INPUT_BOUNDS["joint value"]


class MessageRejected(InputError):
    """A message (or service request) that cannot be used; ``kind`` names the class of problem."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


class JointOrder:
    """
    The configured joint order and the mapping of incoming name lists onto it.

    ``indices(names)`` returns, for each configured joint, its index in ``names``.  Results are
    cached per distinct name list (a robot driver sends the same list every time), so matching
    costs one dict look-up per message.
    """

    CACHED_ORDERS = 64       # bounded: a misbehaving publisher cannot grow the cache forever

    def __init__(self, joint_names):
        self.names = tuple(joint_names)
        self._cache: dict[tuple, np.ndarray] = {}
        self._lists: dict[tuple, list] = {}

    def __len__(self) -> int:
        return len(self.names)

    def indices(self, names, what: str = "message", allow_extra: bool = True) -> np.ndarray:
        if len(names) > MAX_MESSAGE_JOINTS:
            raise MessageRejected("too large", f"{what}: {len(names)} joint names, more than the "
                                               f"{MAX_MESSAGE_JOINTS} accepted in one message")
        key = tuple(names)
        index = self._cache.get((key, allow_extra))
        if index is not None:
            return index
        try:
            index = joint_index(self.names, key, f"{what}: joint names", allow_extra)
        except InputError as exc:
            raise MessageRejected("joint names", str(exc)) from None
        if len(self._cache) < self.CACHED_ORDERS:
            self._cache[(key, allow_extra)] = index
        return index

    def index_list(self, names, what: str = "message") -> list:
        """:meth:`indices` (extra joints allowed) as a list of ints, for plain-Python indexing."""
        index = self._lists.get(tuple(names)) if len(names) <= MAX_MESSAGE_JOINTS else None
        if index is None:
            index = self.indices(names, what).tolist()
            if len(self._lists) < self.CACHED_ORDERS:
                self._lists[tuple(names)] = index
        return index


def plausible_joint_values(values) -> bool:
    """
    Tell whether every value is finite and within ``MAX_JOINT_VALUE`` (the common case, cheaply).

    One sum: every |value| <= the limit if the sum is, and NaN fails it.  False does not say
    which value is wrong: :func:`pick` finds it for the message.
    """
    return sum(map(abs, values)) <= MAX_JOINT_VALUE


def pick(values, index: list, field: str, names, what: str) -> list:
    """values[index] as a list, rejecting non-finite and absurd entries for the needed joints."""
    picked = [values[i] for i in index]
    if plausible_joint_values(picked):
        return picked
    for j, value in enumerate(picked):
        value = float(value)
        if not abs(value) <= MAX_JOINT_VALUE:
            if math.isfinite(value):
                raise MessageRejected("out of range", f"{what}: {field} of joint '{names[j]}' "
                                                      f"is {value:g}, beyond {MAX_JOINT_VALUE:g}")
            raise MessageRejected("non-finite", f"{what}: {field} of joint '{names[j]}' is "
                                                f"{value}")
    return picked


def check_bounded(values, field: str, labels, what: str, quantity: str = "joint value"):
    """
    Return ``values`` ((n,) or (points, n) floats) if every |value| is within its bound.

    ``quantity``: the row of ``INPUT_BOUNDS``; ``labels``: what each column is (joint names, or
    the axes of a wrench).  Otherwise MessageRejected naming the field, the column (and the
    point): "non-finite" for NaN / inf, "out of range" beyond the bound.
    """
    values = np.asarray(values, dtype=float)
    bound = INPUT_BOUNDS[quantity]
    bad = ~(np.abs(values) <= bound)          # (NaN fails too)
    if not bad.any():
        return values
    index = np.argwhere(bad)[0]
    value, label = float(values[tuple(index)]), labels[index[-1]]
    where = f"{field} of joint '{label}'" if quantity == "joint value" else \
        f"{field} {label}"
    if values.ndim == 2:
        where += f" at point {index[0]}"
    if math.isfinite(value):
        raise MessageRejected("out of range", f"{what}: {where} is {value:g}, beyond {bound:g}")
    raise MessageRejected("non-finite", f"{what}: {where} is {value}")


def check_lengths(count: int, positions: int, velocities: int, what: str = "joint_states"):
    """Refuse position / velocity lengths other than the number of names (velocity may be 0)."""
    if positions != count:
        raise MessageRejected("length", f"{what}: {count} names but {positions} positions")
    if velocities not in (0, count):
        raise MessageRejected("length", f"{what}: {count} names but {velocities} velocities")


def no_velocity(what: str = "joint_states") -> MessageRejected:
    """Return the rejection of a message without velocity where the node needs one."""
    return MessageRejected("no velocity", f"{what}: no velocity, which this node needs "
                                          "(computed-torque mode or friction compensation)")


def joint_state_lists(names, position, velocity, order: JointOrder,
                      need_velocity: bool = False, what: str = "joint_states"):
    """
    (q, qd) in ``order`` from a message's name, position and velocity; qd None when empty.

    Plain Python on the per-message path of a node (no numpy for a handful of joints).
    Raises MessageRejected (checks in the module docstring, in that order).
    """
    count = len(names)
    check_lengths(count, len(position), len(velocity), what)
    index = order.index_list(names, what)
    q = pick(position, index, "position", order.names, what)
    if len(velocity) == 0:
        if need_velocity:
            raise no_velocity(what)
        return q, None
    return q, pick(velocity, index, "velocity", order.names, what)


class BatchProblem:
    """Messages of a batch refused for one reason: ``kind``, the first one's ``text``, rows."""

    __slots__ = ("kind", "text", "rows")

    def __init__(self, kind: str, text: str, rows: np.ndarray):
        self.kind, self.text, self.rows = kind, text, rows


def joint_state_batch(names, position: np.ndarray, velocity: np.ndarray, order: JointOrder,
                      need_velocity: bool = False, what: str = "joint_states"):
    """
    :func:`joint_state_lists` for ``m`` messages with the same name list, as arrays.

    ``position`` (m, len(position)), ``velocity`` (m, len(velocity)).  Returns ``(q, qd, ok,
    problems)``: (m, n) arrays in ``order`` (qd NaN where a message has no velocity), ``ok``
    (m,) the messages a node accepts, and a list of :class:`BatchProblem`, one per kind, each
    with the text the node gives for the first of its messages (the same function says it).
    """
    m, n = position.shape[0], len(order)
    nan = np.full((m, n), np.nan)
    try:
        check_lengths(len(names), position.shape[1], velocity.shape[1], what)
        index = order.indices(names, what)
    except MessageRejected as exc:
        return nan, nan, np.zeros(m, bool), [BatchProblem(exc.kind, str(exc), np.arange(m))]
    q = position[:, index]
    qd = velocity[:, index] if velocity.shape[1] else nan
    # a row's kind is that of its first refused check, in joint_state_lists' order
    q_bad = ~(np.abs(q) <= MAX_JOINT_VALUE).all(axis=1)
    qd_bad = ~q_bad & (~(np.abs(qd) <= MAX_JOINT_VALUE).all(axis=1) if velocity.shape[1]
                       else np.zeros(m, bool))
    missing = ~q_bad & (np.ones(m, bool) if need_velocity and not velocity.shape[1]
                        else np.zeros(m, bool))
    problems = []
    for rows, field in ((q_bad, "position"), (qd_bad, "velocity")):
        bad = np.flatnonzero(rows)
        if bad.size:
            problems.extend(_value_problems(position if field == "position" else velocity,
                                            bad, index.tolist(), field, order.names, what))
    if missing.any():
        exc = no_velocity(what)
        problems.append(BatchProblem(exc.kind, str(exc), np.flatnonzero(missing)))
    return q, qd, ~(q_bad | qd_bad | missing), problems


def _value_problems(values: np.ndarray, rows: np.ndarray, index: list, field: str, names,
                    what: str) -> list:
    """Split refused rows by kind ("out of range", "non-finite"), each text from :func:`pick`."""
    picked = values[rows][:, index]
    first = np.argmax(~(np.abs(picked) <= MAX_JOINT_VALUE), axis=1)
    finite = np.isfinite(picked[np.arange(rows.size), first])
    problems = []
    for kind_rows in (rows[finite], rows[~finite]):
        if kind_rows.size:
            try:
                pick(values[kind_rows[0]].tolist(), index, field, names, what)
            except MessageRejected as exc:
                problems.append(BatchProblem(exc.kind, str(exc), kind_rows))
    return problems
