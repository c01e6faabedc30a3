"""
package.xml against the code and the requirement files.

* Every third-party module that ``robot_dynamics_ros/`` or ``launch/`` imports is declared as a run
  dependency (``exec_depend`` or ``depend``) under its rosdep key; every module the tests import
  is declared as a run or test dependency; nothing is declared that nothing uses.
* Every declared key is one that rosdep resolves (``ROSDEP_KEYS`` below, checked against
  ros/rosdistro), or one that rosdistro lacks and the package's own rosdep file
  (rosdep/robot_dynamics_ros.yaml, a source users add) defines, so ``rosdep install
  --from-paths .`` installs what the package needs.
* The pip requirement files and package.xml agree: each declared Python key has its pip package
  pinned (run-time ones in requirements/base.txt), and every pin is a declared dependency or is
  listed in ``NOT_DECLARED`` with the reason.

To add a dependency: import it, add ``import name -> rosdep key`` to ``IMPORT_KEYS`` (unless the
import name is the key, as for ROS packages), the key's pip package to ``PIP_NAMES``, pin it in
requirements/*.txt and declare it in package.xml.
"""
import ast
import re
import sys
from pathlib import Path

import pytest
from catkin_pkg.package import parse_package

ROOT = Path(__file__).resolve().parents[1]

# Import name -> rosdep key, where they differ.  Keys checked against ros/rosdistro's
# rosdep/python.yaml and jazzy/ and kilted/distribution.yaml (commit 8468e88, 2026-08-22; every
# ROS package below is released in both distributions): a "-pip" key is
# used only where rosdep has no system package.  No key exists there (yet) for dask,
# distributed or clarabel (clarabel comes with cvxpy; mcap with mcap-ros2-support).
IMPORT_KEYS = {
    "cvxpy": "python3-cvxpy-pip",
    "dask": "python3-dask-pip",
    "defusedxml": "python3-defusedxml",
    "distributed": "python3-distributed-pip",
    "highspy": "python3-highspy-pip",
    "hypothesis": "python3-hypothesis",
    "llvmlite": "python3-numba",        # numba's LLVM binding, which comes with it
    "matplotlib": "python3-matplotlib",
    "mcap": "mcap-ros2-support",       # the mcap reader comes with it (its dependency)
    "mcap_ros2": "mcap-ros2-support",
    "mujoco": "python3-mujoco-pip",
    "myst_parser": "python3-myst-parser-pip",
    "catkin_pkg": "python3-catkin-pkg",
    "numba": "python3-numba",
    "numpy": "python3-numpy",
    "pinocchio": "pinocchio",
    "pytest": "python3-pytest",
    "rosbags": "python3-rosbags-pip",
    "ruamel": "python3-ruamel.yaml",
    "scipy": "python3-scipy",
    "sphinx": "python3-sphinx",
    "sphinx_rtd_theme": "python3-sphinx-rtd-theme",
    "tqdm": "python3-tqdm",
    "yaml": "python3-yaml",
}
# ROS packages (import name = rosdep key = package name in jazzy/ and kilted/distribution.yaml).
ROS_PACKAGES = {
    "action_msgs", "ament_flake8", "ament_index_python", "ament_pep257", "builtin_interfaces",
    "control_msgs", "diagnostic_msgs",
    "geometry_msgs", "launch", "launch_ros", "lifecycle_msgs", "rcl_interfaces", "rclpy",
    "rosgraph_msgs",
    "sensor_msgs", "std_msgs", "trajectory_msgs", "xacro",
}
# This repository's own packages (no rosdep key needed: built from source beside it).
OWN_PACKAGES = {"robot_dynamics_ros", "robot_dynamics_interfaces"}
# Declared keys that rosdistro does not resolve yet, with the reason (rosdep check fails on them).
UNRESOLVED_KEYS = {
    "python3-dask-pip": "no rosdep key for dask in ros/rosdistro (checked at 8468e88); many bags "
                        "at once (bags/engine.py), pinned in requirements/base.txt",
    "python3-distributed-pip": "no rosdep key for distributed in ros/rosdistro (checked at "
                               "8468e88); a Dask cluster (bags/engine.py), pinned in base.txt",
    "python3-highspy-pip": "no rosdep key for highspy in ros/rosdistro (not checked against a "
                           "rosdistro commit: none at hand); the jerk-limited scaling's linear "
                           "programs (core/trajectories/topp/third_order.py), pinned in base.txt",
}
# ... which the package's own rosdep file defines (a source rosdep users add, see that file).
LOCAL_ROSDEP = ROOT / "rosdep" / "robot_dynamics_ros.yaml"
ROSDEP_KEYS = (set(IMPORT_KEYS.values()) | ROS_PACKAGES | {"ament_python"}) - set(UNRESOLVED_KEYS)
# Test modules that the tests use by name although no test imports them: rosdoc2 runs them.
USED_WITHOUT_IMPORT = {
    "python3-sphinx": "test/test_doc.py builds the documentation with rosdoc2 (Sphinx)",
    "python3-myst-parser-pip": "the Markdown pages of doc/, read by Sphinx in test/test_doc.py",
    "python3-sphinx-rtd-theme": "the theme rosdoc2 sets, in test/test_doc.py",
    "ament_flake8": "test/test_flake8.py runs it as python -m ament_flake8.main (own process)",
}

# rosdep key -> pip package pinned in requirements/*.txt.
PIP_NAMES = {
    "python3-catkin-pkg": "catkin-pkg", "python3-cvxpy-pip": "cvxpy",
    "python3-dask-pip": "dask", "python3-defusedxml": "defusedxml",
    "python3-distributed-pip": "distributed", "python3-highspy-pip": "highspy",
    "python3-hypothesis": "hypothesis",
    "python3-matplotlib": "matplotlib", "mcap-ros2-support": "mcap-ros2-support",
    "python3-mujoco-pip": "mujoco", "python3-myst-parser-pip": "myst-parser",
    "python3-numba": "numba", "python3-numpy": "numpy", "pinocchio": "pin",
    "python3-pytest": "pytest", "python3-rosbags-pip": "rosbags",
    "python3-ruamel.yaml": "ruamel-yaml", "python3-scipy": "scipy",
    "python3-sphinx": "sphinx", "python3-sphinx-rtd-theme": "sphinx-rtd-theme",
    "python3-tqdm": "tqdm", "python3-yaml": "pyyaml",
    "xacro": "xacro",           # a ROS package, pinned from the package index (pure Python)
}
# Pins that are no dependency of the package itself, and why they are pinned.
NOT_DECLARED = {
    "clarabel": "cvxpy's solver, chosen by name (solver=cp.CLARABEL); a dependency of cvxpy",
    "llvmlite": "numba's LLVM binding, pinned to the version numba resolves to",
    "zstandard": "the zstd binding of the tests' MCAP reader (not imported by the tests)",
    "mcap": "the MCAP reader the tests import, a dependency of mcap-ros2-support (declared)",
    "setuptools": "packaging (pip install -e ., colcon's ament_python build)",
    "wheel": "packaging",
    "colcon-common-extensions": "tools/colcon_check.sh (make colcon-check)",
    "flake8": "engine of ament_flake8", "pycodestyle": "engine of ament_flake8",
    "pyflakes": "engine of ament_flake8", "pydocstyle": "engine of ament_pep257",
    "rosdoc2": "the documentation builder (no rosdep key; a pip tool, like colcon)",
    "docutils": "Sphinx's reStructuredText parser, pinned for rosdoc2",
    "breathe": "required by rosdoc2 (its C++ builder)", "exhale": "required by rosdoc2",
    "osrf-pycommon": "required by rosdoc2",
    "roboticstoolbox-python": "bench reference library (requirements/bench.txt)",
    "toppra": "bench reference library (requirements/bench.txt)",
    "ruckig": "bench reference jerk-limited generator (requirements/bench.txt)",
    "mujoco": "bench reference simulator (requirements/bench.txt)",
    "cmeel-eigen": "Eigen's headers for bench/bench_codegen_cpp.py's C++ program against "
                   "Pinocchio (requirements/bench.txt; not imported)",
}
# ROS packages without a wheel on the package index: the launch file needs a ROS installation;
# control_msgs is built into the development venv from tools/vendor/control_msgs (setup_venv.sh).
NOT_ON_PYPI = {"launch", "launch_ros", "control_msgs"}
RUN_DEPENDENCY_FILES = ("base.txt",)
REQUIREMENT_FILES = ("base.txt", "test.txt", "doc.txt", "bench.txt")
# The ROS wheels of each supported distribution (tools/setup_venv.sh, ROS_DISTRO).
ROS_FILES = ("ros-kilted.txt", "ros-jazzy.txt")


def imported_modules(paths):
    """Return the top-level modules imported (absolutely) by the Python files under ``paths``."""
    names = set()
    for path in paths:
        files = [path] if path.is_file() else sorted(path.rglob("*.py"))
        for file in files:
            for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names.update(alias.name.split(".")[0] for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names.add(node.module.split(".")[0])
    return names - set(sys.stdlib_module_names) - {"__future__"}


def local_modules(directory):
    """Return the module names the tests import from their own folders (helpers, on the path)."""
    return {p.stem for p in directory.rglob("*.py")} | {
        p.name for p in directory.rglob("*") if (p / "__init__.py").is_file()}


def third_party(modules):
    return {m for m in modules if m not in OWN_PACKAGES}


def key_of(module):
    if module in IMPORT_KEYS:
        return IMPORT_KEYS[module]
    assert module in ROS_PACKAGES, (
        f"'{module}' is imported but has no rosdep key in test/test_package_xml.py: add it to "
        f"IMPORT_KEYS (import name -> rosdep key) or ROS_PACKAGES")
    return module


def declared():
    package = parse_package(str(ROOT / "package.xml"))
    run = {d.name for d in package.exec_depends} | {d.name for d in package.run_depends}
    test = {d.name for d in package.test_depends}
    build = {d.name for d in package.build_depends} | {d.name for d in package.buildtool_depends}
    return package, run, test, build


def pins(names=REQUIREMENT_FILES):
    pinned = {}
    for name in names:
        for line in (ROOT / "requirements" / name).read_text().splitlines():
            match = re.match(r"^([A-Za-z0-9_.\-]+)==", line.strip())
            if match:
                pinned[re.sub(r"[-_.]+", "-", match[1]).lower()] = name   # PEP 503 names
    return pinned


def test_package_xml_is_valid_format_3():
    package, _, _, build = declared()
    package.validate()
    assert package.package_format == 3
    assert build == {"ament_python"}
    assert "DH robot files" not in package.description
    assert "URDF" in package.description
    assert [e.tagname for e in package.exports][:1] == ["build_type"]


def test_every_import_of_the_package_is_a_run_dependency():
    _, run, test, _ = declared()
    needed = {key_of(m) for m in third_party(imported_modules(
        [ROOT / "robot_dynamics_ros", ROOT / "launch"]))}
    needed.add("robot_dynamics_interfaces")
    assert sorted(needed - run) == [], "imported by the package but not an exec_depend"
    assert sorted(run - needed) == [], "declared as exec_depend but not imported by the package"
    assert sorted(run & test) == [], "declared twice"


def test_every_import_of_the_tests_is_declared_and_every_test_dependency_used():
    _, run, test, _ = declared()
    test_dir = ROOT / "test"
    modules = third_party(imported_modules([test_dir]) - local_modules(test_dir))
    needed = {key_of(m) for m in modules}
    assert sorted(needed - run - test) == [], "imported by the tests but not declared"
    unused = test - needed - set(USED_WITHOUT_IMPORT)
    assert sorted(unused) == [], "declared as test_depend but not used by the tests"


def test_every_declared_key_is_a_rosdep_key():
    _, run, test, build = declared()
    unknown = (run | test | build) - ROSDEP_KEYS - OWN_PACKAGES - set(UNRESOLVED_KEYS)
    assert sorted(unknown) == []


def test_the_keys_rosdistro_lacks_are_in_the_package_rosdep_file():
    import yaml
    rules = yaml.safe_load(LOCAL_ROSDEP.read_text(encoding="utf-8"))
    assert sorted(rules) == sorted(UNRESOLVED_KEYS), "rosdep/robot_dynamics_ros.yaml's keys"
    for key, platforms in rules.items():
        assert {"debian", "ubuntu"} <= set(platforms), key
        for platform, rule in platforms.items():
            assert rule == {"pip": {"packages": [PIP_NAMES[key]]}}, (key, platform)


@pytest.mark.parametrize("ros_file", ROS_FILES)
def test_requirement_files_and_package_xml_agree(ros_file):
    # Each distribution's ROS wheels (requirements/ros-<distro>.txt) with the common pins.
    _, run, test, _ = declared()
    pinned = pins(REQUIREMENT_FILES + (ros_file,))
    ros_wheels = pins((ros_file, "test.txt"))
    expected = set()
    for key in sorted((run | test) - OWN_PACKAGES):
        if key in PIP_NAMES:
            pip_name = PIP_NAMES[key]
            assert pip_name in pinned, f"{key}: pip package {pip_name} is not pinned"
            if key in run:
                assert pinned[pip_name] in RUN_DEPENDENCY_FILES, (
                    f"{key} is a run dependency but pinned in {pinned[pip_name]}")
            expected.add(pip_name)
        elif key not in NOT_ON_PYPI:
            wheel = "ros-" + key.replace("_", "-")
            assert wheel in ros_wheels, f"{key}: {wheel} is not pinned in requirements/"
            expected.add(wheel)
    stray = set(pins()) - expected - set(NOT_DECLARED)
    assert sorted(stray) == [], "pinned in requirements/ but neither declared nor explained"


# Names setup.py's install_requires may hold besides the run dependencies, and why.
INSTALL_EXTRAS = {
    "setuptools": "numba.pycc builds the extensions with it (robot-dynamics compile)",
    "clarabel": "cvxpy's solver, chosen by name (NOT_DECLARED): pip must bring it",
}


def setup_keyword(name):
    """Return the literal value of ``name=`` in setup.py's ``setup(...)`` call."""
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "setup":
            for keyword in node.keywords:
                if keyword.arg == name:
                    return ast.literal_eval(keyword.value)
    raise AssertionError(f"setup.py's setup() has no {name}=")


def test_pip_installs_every_run_dependency():
    """``pip install`` of the package (a wheel) brings what package.xml's run keys bring."""
    _, run, _, _ = declared()
    wanted = {PIP_NAMES[key] for key in run if key in PIP_NAMES}
    required = {re.sub(r"[-_.]+", "-", r).lower() for r in setup_keyword("install_requires")}
    assert sorted(wanted - required) == [], "run dependencies pip would not install"
    assert sorted(required - wanted - set(INSTALL_EXTRAS)) == [], "install_requires unexplained"


def test_the_wheel_build_requirements_are_the_pins():
    """pyproject.toml's build requirements (the wheel's kernels are compiled with them)."""
    import tomllib
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    base = {}
    for line in (ROOT / "requirements" / "base.txt").read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.strip().split("==")
            base[re.sub(r"[-_.]+", "-", name).lower()] = version
    for requirement in requires:
        if "==" in requirement:
            name, version = requirement.split("==")
            assert base.get(re.sub(r"[-_.]+", "-", name).lower()) == version, requirement
    assert {"numba", "numpy", "pyyaml"} <= {re.split("[=<>]", r)[0].lower() for r in requires}
