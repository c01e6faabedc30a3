"""
Shared fixtures and the environment of every test session.

Before any test module can import rclpy, the session's DDS settings are fixed here: loopback-only
discovery (ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST: no DDS traffic may leave this machine), a
private ROS_DOMAIN_ID and a temporary ROS_LOG_DIR (``ros_fixtures.ros_environment`` gives the
same values to the node processes the tests start).

The simulator's numba-compiled dynamics are cached in a directory of this session (removed at its
end; the node processes the tests start inherit it), not in the user's ~/.cache: every session
compiles its models afresh (about 2 s per model), so the tests never depend on an earlier run.

Layout: the tests mirror the package (``test/core/algorithms/test_rnea.py`` tests
``robot_dynamics_ros/core/algorithms/rnea.py``); helpers shared by several test modules live in
``test/support/`` (on the path through setup.cfg), data in ``test/data/``.  Every test module
that starts DDS carries the ``ros`` marker, so ``pytest -m "not ros"`` is the fast loop of the
ROS-free tests; :func:`pytest_collection_modifyitems` refuses a module that uses the ROS fixtures
without it.
"""
import os
import tempfile

# One BLAS thread in the tests and the processes they start, set before numpy loads OpenBLAS: the
# suite's matrices are small, and on a machine whose cores are busy OpenBLAS's spinning threads
# made a 3000 x 60 QR take 1.2 s instead of 0.011 s (measured on the 2-core CI machine, load 8).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

# A domain from the pid, so concurrent sessions rarely share one (and the test namespaces carry the
# pid too, so even then they do not see each other).
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ["ROS_DOMAIN_ID"] = str(1 + os.getpid() % 100)
os.environ["ROS_LOG_DIR"] = tempfile.mkdtemp(prefix="rdr-test-roslog-")
os.environ["RMW_IMPLEMENTATION"] = "rmw_fastrtps_cpp"
os.environ.pop("ROS_LOCALHOST_ONLY", None)
# The compiled kernels: the install's cache (``robot-dynamics compile``, run by setup_venv.sh),
# as a user's processes find it, so the tests load them instead of compiling them (minutes on a
# busy 2-core machine).  The cache is keyed by a hash of the kernels' text: never stale.  Tests of
# a cold cache set their own directory.


@pytest.fixture
def rng():
    """Return a seeded random generator (the same draws on every run)."""
    return np.random.default_rng(20261123)


@pytest.fixture(scope="session")
def shipped_model():
    """
    Return a getter of the shipped robots, each loaded once per session.

    ``shipped_model(name)`` is the shipped robot ``name``.
    """
    from robot_dynamics_ros.core import RobotModel
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = RobotModel.named(name)
        return cache[name]
    return get


def pytest_collection_modifyitems(config, items):
    """Refuse a test module that uses the ROS fixtures without the ``ros`` marker."""
    unmarked = sorted({item.module.__name__ for item in items
                       if getattr(item, "module", None) is not None
                       and hasattr(item.module, "RosClient")
                       and item.get_closest_marker("ros") is None})
    if unmarked:
        raise pytest.UsageError("test modules that start DDS need 'pytestmark = pytest.mark.ros': "
                                + ", ".join(unmarked))
