"""
Fuzzing the bag inputs: small valid bags (MCAP, SQLite3) with their bytes damaged.

Property (hypothesis, derandomized, bounded, no shrinking): whatever the damage -- bytes of the
storage file or of metadata.yaml overwritten, zeroed or cut off -- ``bag info --check``,
``bag process`` and ``bag recover`` either succeed, writing a readable bag whose every number is
finite, or refuse with the package's own error (core/errors.py) naming the bag; never another
exception (a traceback), and nothing half-written is left beside the output.
"""
import math
import shutil

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from robot_dynamics_ros.bags import bag_info, write_joint_states
from robot_dynamics_ros.bags.process import ProcessOptions, process_bag
from robot_dynamics_ros.bags.reader import open_bag
from robot_dynamics_ros.bags.recover import recover
from robot_dynamics_ros.bags.types import deserialize
from robot_dynamics_ros.core import RobotDynamicsError, rnea

SETTINGS = settings(derandomize=True, max_examples=40, deadline=None, database=None,
                    phases=(Phase.explicit, Phase.generate),
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])


@pytest.fixture(scope="module")
def bags(tmp_path_factory, puma):
    """Return {storage: a valid bag of 40 Puma joint states}."""
    root = tmp_path_factory.mktemp("fuzz_bags")
    t = np.arange(40) * 1e-3
    q = 0.3 * np.sin(t[:, None] + np.arange(6))
    tau = rnea(puma, q, q, q)
    for storage in ("mcap", "sqlite3"):
        write_joint_states(root / storage, puma.joint_names, t, q, q, tau, storage=storage)
    return {storage: root / storage for storage in ("mcap", "sqlite3")}


@st.composite
def damage(draw, data: bytes) -> bytes:
    """Return ``data`` with one to three spans overwritten, zeroed, or the end cut off."""
    data = bytearray(data)
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["bytes", "zeros", "cut"]))
        start = draw(st.integers(0, max(len(data) - 1, 0)))
        if kind == "cut":
            del data[start:]
            continue
        length = draw(st.integers(1, 64))
        fill = draw(st.binary(min_size=length, max_size=length)) if kind == "bytes" \
            else bytes(length)
        data[start:start + length] = fill
    return bytes(data)


def finite(value) -> bool:
    """Tell whether every number in a deserialized message is finite."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, np.ndarray):
        return value.dtype.kind not in "fc" or bool(np.isfinite(value).all())
    if isinstance(value, (list, tuple)):
        return all(finite(v) for v in value)
    if hasattr(value, "__dataclass_fields__"):
        return all(finite(getattr(value, f)) for f in value.__dataclass_fields__)
    return True


def check_refused_or_written(action, bag, output, decode=True):
    """
    Run ``action``: one clear error naming ``bag``, or a complete output bag, finite if decoded.

    (Recovered messages are the bytes found, a damaged one as damaged: not decoded.)
    """
    try:
        action()
    except RobotDynamicsError as exc:
        assert bag.name in str(exc), str(exc)
        assert not output.exists()
    else:
        with open_bag(output) as written:
            for connection, _, raw in written.messages():
                assert not decode or finite(deserialize(raw, connection.msgtype)), \
                    connection.topic
    assert not list(output.parent.glob(f".{output.name}.partial-*"))


@SETTINGS
@given(data=st.data())
def test_a_damaged_bag_is_read_processed_and_recovered_or_refused_by_name(
        tmp_path_factory, bags, puma, data):
    storage = data.draw(st.sampled_from(sorted(bags)))
    work = tmp_path_factory.mktemp("case")
    bag = work / "damaged"
    shutil.copytree(bags[storage], bag)
    files = sorted(bag.iterdir())
    target = data.draw(st.sampled_from(files))
    target.write_bytes(data.draw(damage(target.read_bytes())))
    try:
        info = bag_info(bag, check=True)
    except RobotDynamicsError as exc:
        assert bag.name in str(exc), str(exc)
    else:
        assert info is not None
    check_refused_or_written(
        lambda: process_bag(bag, work / "processed", puma, ProcessOptions(namespace="")),
        bag, work / "processed")
    (bag / "metadata.yaml").unlink(missing_ok=True)          # a recording that was killed
    check_refused_or_written(lambda: recover(bag, work / "recovered"), bag, work / "recovered",
                             decode=False)
