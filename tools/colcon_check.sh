#!/usr/bin/env bash
# Check the ROS user's workflow: a colcon workspace with this repository under
# src/ builds both packages (robot_dynamics_interfaces lives inside the
# robot_dynamics_ros package folder, where colcon does not look on its own, so it
# is named as an extra base path) and `colcon test` passes.
#
# What a ROS user runs (the venv plays the role of /opt/ros/kilted; VENV=.venv-jazzy, or
# `make colcon-check ROS_DISTRO=jazzy`, that of /opt/ros/jazzy):
#   source .venv/setup.bash
#   cd ws && colcon build --base-paths src src/robot_dynamics_ros/robot_dynamics_interfaces
#   source install/setup.bash
#   colcon test --base-paths src src/robot_dynamics_ros/robot_dynamics_interfaces
#   colcon test-result --verbose
#
# Usage: tools/colcon_check.sh   (after tools/setup_venv.sh)
# Env: KEEP_WS=1 keeps the temporary workspace; COLCON_PYTEST_K, a pytest -k expression, limits
#      what colcon test runs (.ci/run sets it: the suite itself has run just before).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${VENV:-$ROOT/.venv}"
if [[ ! -x "$VENV/bin/colcon" || ! -f "$VENV/setup.bash" ]]; then
  echo "error: $VENV is not set up; run tools/setup_venv.sh (make venv) first" >&2
  exit 1
fi

export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
export RMW_IMPLEMENTATION=rmw_fastrtps_cpp
export ROS_DOMAIN_ID="${ROS_DOMAIN_ID:-43}"
export ROS_LOG_DIR="${ROS_LOG_DIR:-$(mktemp -d -t rdr-roslog.XXXXXX)}"

WS="$(mktemp -d -t rdr-colcon-ws.XXXXXX)"
if [[ "${KEEP_WS:-0}" == 1 ]]; then
  echo "[colcon_check] workspace kept: $WS"
else
  trap 'rm -rf "$WS"' EXIT
fi
PKG="$WS/src/robot_dynamics_ros"
mkdir -p "$PKG"
# A copy (not a symlink) so that colcon never writes into the repository.
tar -C "$ROOT" \
  --exclude='./.venv*' --exclude=./.git --exclude=./build --exclude=./install --exclude=./log \
  --exclude='*.egg-info' --exclude=__pycache__ --exclude=.pytest_cache \
  -cf - . | tar -C "$PKG" -xf -

cd "$WS"
set +u  # activate/setup scripts read unset variables
# shellcheck disable=SC1091
source "$VENV/setup.bash"
set -u
# Make sure colcon does not reuse an unrelated overlay from the caller's environment.
unset COLCON_PREFIX_PATH

BASE_PATHS=(--base-paths src src/robot_dynamics_ros/robot_dynamics_interfaces)
echo "[colcon_check] colcon list"
colcon list "${BASE_PATHS[@]}"
[[ "$(colcon list --names-only "${BASE_PATHS[@]}" | sort | tr '\n' ' ')" == \
   "robot_dynamics_interfaces robot_dynamics_ros " ]] \
  || { echo "error: colcon did not find both packages" >&2; exit 1; }

echo "[colcon_check] colcon build"
colcon build "${BASE_PATHS[@]}" --event-handlers console_cohesion+

set +u
# shellcheck disable=SC1091
source install/setup.bash
set -u
echo "[colcon_check] overlay check"
python - "$WS/install" <<'EOF'
import sys
import robot_dynamics_interfaces.srv as srv
from ament_index_python.packages import get_package_share_directory
install = sys.argv[1]
assert srv.__file__.startswith(install), f"interfaces not from the workspace: {srv.__file__}"
share = get_package_share_directory("robot_dynamics_ros")
assert share.startswith(install), f"robot_dynamics_ros share not from the workspace: {share}"
assert srv.GetMassMatrix.Response().size == 0
print("interfaces:", srv.__file__)
print("share:", share)
EOF

# colcon build compiled the kernels (setup.py's install command): the installed package finds its
# extensions by the cheap probe (the index of its own files' fingerprint, written by that build),
# without importing numba.
echo "[colcon_check] kernels compiled at build"
python - "$WS/install" <<'EOF'
import sys
import robot_dynamics_ros
from robot_dynamics_ros.core import jit
from robot_dynamics_ros.core.algorithms import compiled
from robot_dynamics_ros.core.trajectories.topp import passes
assert robot_dynamics_ros.__file__.startswith(sys.argv[1]), robot_dynamics_ros.__file__
for spec in (compiled.spec(), passes.spec()):
    module = jit.load_ahead(spec)
    assert module is not None, f"no extension indexed for the installed {spec.prefix}"
    print(f"{spec.prefix}: {module.__robot_dynamics_ros_ahead__}")
assert "numba" not in sys.modules, "loading the extensions imported numba"
EOF

echo "[colcon_check] colcon test"
TEST_ARGS=()
# colcon strips the leading space, which keeps " -k" from being read as one of its own options
if [[ -n "${COLCON_PYTEST_K:-}" ]]; then TEST_ARGS+=(--pytest-args " -k" "$COLCON_PYTEST_K"); fi
colcon test "${BASE_PATHS[@]}" --event-handlers console_direct+ --return-code-on-test-failure \
  "${TEST_ARGS[@]}"
colcon test-result --verbose --test-result-base build
echo "[colcon_check] OK"
