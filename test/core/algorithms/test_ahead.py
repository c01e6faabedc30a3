"""
The kernels compiled ahead of time (core/jit.py ``build_ahead``/``load_ahead``, numba.pycc).

* the extension's functions give the plain-Python texts' numbers and Pinocchio's (to the
  route's tolerances), called directly as ``route.bound`` calls them;
* a fresh process where the extension was built computes rnea, forward dynamics, the mass
  matrix and a time-optimal scaling without importing numba;
* a missing, corrupt or stale extension (another numba, Python or CPU) is not loaded, with no
  error: the process takes numba's route and gets the same numbers.

The extension is the one ``robot-dynamics compile`` built at install (built here once if the
kernels' text changed since: a minute or two).
"""

import hashlib
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from random_robots import random_robot_dict, random_state
from robot_dynamics_ros.core import InputError, RobotModel, jit
from robot_dynamics_ros.core.algorithms import compiled, plain, route
from robot_dynamics_ros.core.algorithms.checked import gravity_in_base
from robot_dynamics_ros.core.algorithms.frames import numpy_jacobian
from robot_dynamics_ros.core.inputs import joint_arrays
from robot_dynamics_ros.core.model.bodies import numeric_form
from robot_dynamics_ros.core.trajectories.topp import passes
from urdf_samples import PinocchioChain, random_urdf, relative_error

pytest.importorskip("numba")
TOL = 1e-12             # test_route.py's: the same recursions in another compilation


@pytest.fixture(scope="module")
def extension():
    """Build the kernels' extension unless the install's is for this text; return it."""
    for spec in (compiled.spec(), passes.spec()):
        path, what = jit.build_ahead(spec)
        if path is None:
            pytest.skip(f"no ahead-of-time extension here: {what}")
    module = jit.load_ahead(compiled.spec(), compiled.source())
    assert module is not None and jit.is_ahead(module)
    return module


def direct(module, model, q, qd, x):
    """Return the extension's numbers for one state or a batch, by its functions directly."""
    ne, rows = compiled.constants(model, numeric_form(model)), compiled.constants(model)
    batch = q.ndim == 2
    out = {"rnea": np.empty(q.shape), "gravity": np.empty(q.shape),
           "forward_dynamics": np.empty(q.shape),
           "mass_matrix": np.empty(q.shape[:-1] + (model.n, model.n)),
           "jacobian": np.empty(q.shape[:-1] + (6, model.n))}
    suffix = "many" if batch else "one"
    assert getattr(module, "rnea_" + suffix)(ne, q, qd, x, out["rnea"])
    assert getattr(module, "gravity_" + suffix)(ne, q, out["gravity"])
    assert getattr(module, "mass_" + suffix)(rows, q, out["mass_matrix"])
    assert getattr(module, "aba_" + suffix)(rows, q, qd, x, out["forward_dynamics"]) == 0
    assert getattr(module, "jacobian_" + suffix)(rows, q, out["jacobian"])
    return out


def plain_numbers(model, q, qd, x):
    """Return the plain-Python texts' numbers of what the kernels compute (``route._plain``)."""
    (q, qd, x), _ = joint_arrays(model, q=q, qd=qd, qdd=x)
    g, wrench = compiled.kernel_array(gravity_in_base(model, None))[0], np.zeros((1, 6))
    accelerations, ok = plain.forward_dynamics(model, q, qd, x, g, wrench)
    assert ok
    return {"rnea": plain.rnea(model, q, qd, x, g, wrench),
            "gravity": plain.rnea(model, q, 0 * q, 0 * q, g, wrench),
            "forward_dynamics": accelerations, "mass_matrix": plain.mass_matrix(model, q),
            "jacobian": numpy_jacobian(model, q, None, None, "world")}


def test_the_extension_gives_the_plain_texts_numbers(extension):
    rng = np.random.default_rng(5)
    models = [RobotModel.named("puma560"), RobotModel.named("stanford"),
              RobotModel.from_dict(random_robot_dict(5, rng, "modified", prismatic_prob=0.3,
                                                     offsets=True))]
    for model in models:
        for batch in (None, 7):
            q, qd, x = random_state(model, rng, batch)
            want = plain_numbers(model, q, qd, x)
            for name, got in direct(extension, model, q, qd, x).items():
                scale = max(1.0, float(np.abs(want[name]).max()))
                np.testing.assert_allclose(got, want[name], rtol=0, atol=TOL * scale,
                                           err_msg=f"{model.name} {name} batch {batch}")


def test_the_extension_agrees_with_pinocchio(extension):
    """Pinocchio reads the URDF itself; its CRBA and ABA against the extension's."""
    sample = random_urdf(np.random.default_rng(2), 7)
    oracle = PinocchioChain(sample.text, sample.chain, sample.tip)
    model = RobotModel.from_urdf(sample.text, tip_link=sample.tip).rigid()
    rng = np.random.default_rng(8)
    for _ in range(3):
        q, qd, tau = rng.uniform(-1, 1, model.n), rng.uniform(-1, 1, model.n), \
            rng.normal(size=model.n)
        got = direct(extension, model, q, qd, tau)
        B = oracle.mass_matrix(q)
        assert relative_error(got["mass_matrix"], B) <= 1e-12
        assert relative_error(got["forward_dynamics"],
                              oracle.forward_dynamics(q, qd, tau)) <= 1e-12 * np.linalg.cond(B)


FRESH = textwrap.dedent("""
    import json, sys
    import numpy as np
    {patch}
    from robot_dynamics_ros.core import (JointTrajectory, RobotModel, forward_dynamics,
                                         mass_matrix, rnea, time_optimal_scaling)
    from robot_dynamics_ros.core.algorithms import compiled
    model = RobotModel.named("puma560")
    q = np.linspace(0.1, 0.6, 6); qd = np.linspace(-1.0, 1.0, 6); z = np.ones(6)
    out = {{"rnea": rnea(model, q, qd, z).tolist(),
            "forward": forward_dynamics(model, q, qd, z).tolist(),
            "mass": mass_matrix(model, q).tolist()}}
    zeros = np.zeros((3, 6))
    traj = JointTrajectory(model.joint_names, [0.0, 1.0, 2.0], [0 * q, q, 0 * q], zeros, zeros)
    out["duration"] = float(time_optimal_scaling(model, traj).duration)
    out["numba"] = "numba" in sys.modules
    out["status"] = compiled.status()
    print(json.dumps(out))
    """)


def fresh(patch: str = "") -> dict:
    run = subprocess.run([sys.executable, "-c", FRESH.format(patch=patch)], capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_a_fresh_process_with_the_extension_never_imports_numba(extension):
    ahead = fresh()
    assert ahead["numba"] is False, ahead["status"]
    assert "ahead of time" in ahead["status"]
    # the same numbers on numba's route: the extension made stale as by another numba
    stale = fresh("from robot_dynamics_ros.core import jit\n"
                  "jit._platform = lambda _f=jit._platform: _f() + ' (another numba)'")
    assert stale["numba"] is True and "compiled with numba" in stale["status"]
    for name in ("rnea", "forward", "mass"):
        want = np.array(stale[name])
        np.testing.assert_allclose(ahead[name], want, rtol=0,
                                   atol=TOL * max(1.0, np.abs(want).max()))
    assert ahead["duration"] == pytest.approx(stale["duration"], rel=1e-9)


def test_a_missing_or_corrupt_extension_is_not_loaded_and_says_nothing(tmp_path, monkeypatch,
                                                                       recwarn):
    monkeypatch.setenv(jit.CACHE_ENVIRONMENT_VARIABLE, str(tmp_path))
    text = "a module text of no extension built"
    spec = jit.Spec(__name__, "corrupt_test", lambda: text, {"twice": "float64(float64)"},
                    (__file__,))
    assert jit.load_ahead(spec) is None and jit.load_ahead(spec, text) is None     # absent
    name = jit.ahead_name(spec, text)
    suffix = jit.importlib.machinery.EXTENSION_SUFFIXES[0]
    (tmp_path / (name + suffix)).write_bytes(b"not a shared library")
    (tmp_path / "corrupt_test_aot_index.json").write_text(json.dumps({"x": name}))
    assert jit.load_ahead(spec, text) is None and jit.load_ahead(spec) is None    # corrupt
    (tmp_path / "corrupt_test_aot_index.json").write_text("{not json")
    assert jit.load_ahead(spec) is None
    # a wheel's shipped extension (jit.ship; test_wheel.py builds a real one): the same
    shipped = tmp_path / "shipped"
    monkeypatch.setattr(jit, "SHIPPED", shipped)
    assert jit.load_ahead(spec) is None                                 # no index
    shipped.mkdir()
    name = jit.shipped_name(spec, text)
    (shipped / (name + suffix)).write_bytes(b"not a shared library")
    entry = {"name": name, "files": jit._file_digests(spec.files)}
    assert entry["files"] is None   # (a file outside the package is never a shipped text)
    package_file = Path(jit.__file__)
    spec = spec._replace(files=(str(package_file),))
    entry["files"] = jit._file_digests(spec.files)
    assert entry["files"] == {"core/jit.py": hashlib.sha256(package_file.read_bytes()).hexdigest()}
    (shipped / "index.json").write_text(json.dumps({"corrupt_test": entry}))
    assert jit.load_ahead(spec) is None                                 # corrupt
    (shipped / "index.json").write_text(json.dumps({"corrupt_test": dict(entry, files={
        "core/jit.py": "0" * 64})}))
    assert jit.load_ahead(spec) is None                                 # another text
    (shipped / "index.json").write_text("[not an index")
    assert jit.load_ahead(spec) is None
    assert not [w for w in recwarn if issubclass(w.category, jit.CompilationWarning)]


def test_arguments_the_unchecked_entries_cannot_take_reach_the_checked_path(extension):
    """float32, integer and mixed-dimension arrays: the core's numbers or its InputError."""
    model = RobotModel.named("puma560")
    kernel = route.bound(model)
    assert kernel.implementation == "compiled"
    q, qd, x = (np.linspace(0.1, 0.6, 6), np.linspace(-1.0, 1.0, 6), np.ones(6))
    want = kernel.rnea(q, qd, x), kernel.forward_dynamics(q, qd, x)
    for f, expected in zip((kernel.rnea, kernel.forward_dynamics), want):
        np.testing.assert_allclose(f(q, qd.astype(np.float32), x), expected, rtol=1e-6)
        np.testing.assert_allclose(f(q, qd, np.ones(6, dtype=np.int64)), expected,
                                   rtol=1e-12)
        with pytest.raises(InputError):
            f(q, np.tile(qd, (2, 1)), x)
