"""
``bag process --outputs observer``: the observer's residual offline, message by message.

Oracles: ``core.observer.MomentumObserver`` fed the same messages one at a time (what the node
does), on a bag of the simulated Puma tracking a reference under a step wrench, with stamps at a
wall-clock epoch (1.7e9 s: the time base must not lose the 1 ms intervals to rounding), small
chunks (the state carried across them) and one repeated stamp (refused and counted, as the node
refuses it); the applied J^T F itself (reached within 2 % after 5 / K_O).
"""

import numpy as np
import pytest

from observer_cases import GENTLE, puma, push_wrench, track, write_bag
from robot_dynamics_ros.bags import load_joint_states
from robot_dynamics_ros.bags.process import ProcessOptions, process_bag
from robot_dynamics_ros.commands.cli import main as cli_main
from robot_dynamics_ros.core import InputError
from robot_dynamics_ros.core.observer import MomentumObserver, ObserverOptions

EPOCH = 1_700_000_000 * 1_000_000_000
K = 50.0
WRENCH_ON = 0.3


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """Write a bag of the GENTLE run, a wrench from WRENCH_ON; stamp 100 repeats stamp 99."""
    model = puma()
    run = track(model, GENTLE, WRENCH_ON + 0.2, wrench=push_wrench(model, WRENCH_ON),
                wrench_on=WRENCH_ON)
    stamps = EPOCH + np.rint(run.t * 1e9).astype(np.int64)
    stamps[100] = stamps[99]
    path = tmp_path_factory.mktemp("observer") / "input"
    write_bag(path, model, run, stamps)
    return model, run, stamps, path


def node_like(model, options, stamps, run):
    """Return the residual of every accepted message, fed one by one (the node's path)."""
    observer = MomentumObserver(model, options)
    out = {}
    for k, stamp in enumerate(stamps.tolist()):
        try:
            out[stamp] = list(observer.update((stamp - int(stamps[0])) * 1e-9,
                                              run.q[k].tolist(), run.qd[k].tolist(),
                                              run.tau[k].tolist()))
        except InputError:
            continue
    return out


def test_the_observer_output_equals_the_residual_message_by_message(recorded, tmp_path):
    model, run, stamps, path = recorded
    options = ObserverOptions(K, effort_timing="interval")
    report = process_bag(path, tmp_path / "out", model, ProcessOptions(
        outputs=("observer",), namespace="", chunk_size=64, observer=options))
    assert report.rejected == {"observer: stamps not increasing": 1}
    out = load_joint_states(tmp_path / "out", "/external_effort", require_position=False)
    expected = node_like(model, options, stamps, run)
    assert out.stamp.size == len(expected) == stamps.size - 1
    np.testing.assert_array_equal(out.stamp, sorted(expected))
    np.testing.assert_allclose(out.effort, [expected[s] for s in out.stamp.tolist()],
                               rtol=1e-12, atol=1e-12)
    k = np.searchsorted(run.t, WRENCH_ON + 5.0 / K - 1e-9)
    row = np.searchsorted(out.stamp, stamps[k])
    applied = run.external[k]
    assert np.abs(out.effort[row] - applied).max() <= 0.02 * np.abs(applied).max()


def test_the_command_line_takes_the_observer_settings(recorded, tmp_path):
    model, run, stamps, path = recorded
    assert cli_main(["bag", "process", str(path), str(tmp_path / "out"), "--robot", "puma560",
                     "--outputs", "observer", "--namespace", "", "--no-progress",
                     "--observer-gains", "30", "40", "50", "60", "70", "80",
                     "--effort-timing", "interval", "--static-velocity", "0.02"]) == 0
    out = load_joint_states(tmp_path / "out", "/external_effort", require_position=False)
    options = ObserverOptions((30.0, 40.0, 50.0, 60.0, 70.0, 80.0), "interval",
                              static_velocity=0.02)
    expected = node_like(model, options, stamps, run)
    np.testing.assert_allclose(out.effort, [expected[s] for s in out.stamp.tolist()],
                               rtol=1e-12, atol=1e-12)


def test_bad_observer_settings_are_refused_before_anything_is_written(recorded, tmp_path):
    model, _, _, path = recorded
    with pytest.raises(InputError, match="gains"):
        process_bag(path, tmp_path / "out", model, ProcessOptions(
            outputs=("observer",), observer=ObserverOptions((50.0,) * 5)))
    assert not (tmp_path / "out").exists()
