#!/usr/bin/env bash
# Create/refresh a venv in the repository root: one ROS 2 distribution (pip
# wheels of requirements/ros-$ROS_DISTRO.txt), the pinned Python dependencies,
# robot_dynamics_interfaces and control_msgs (tools/vendor/control_msgs: trimmed to
# FollowJointTrajectory; no wheel exists), both built with CMake into the venv prefix, and
# this project (editable install).
#
# Idempotent: .venv/.setup-stamp holds hashes of the inputs; when nothing
# changed the script exits at once, and when only the project's packaging files
# changed (setup.py, setup.cfg, resource/, package.xml, launch/, config/) only the project is
# reinstalled.
#
# Usage: tools/setup_venv.sh [--bench] [--force]
#   --bench   also install requirements/bench.txt (roboticstoolbox, toppra)
#   --force   ignore the stamp
# Env: PYTHON (interpreter, must be CPython 3.11),
#      ROS_DISTRO (kilted, the default and newest supported, or jazzy, the LTS),
#      VENV (default <repo>/.venv for kilted, <repo>/.venv-<distro> for the others)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The supported distributions: each has requirements/ros-<distro>.txt and its own venv, so two
# can live side by side (robot_dynamics_ros/messages/distro.py says what differs between them).
ROS_DISTRO="${ROS_DISTRO:-kilted}"
case "$ROS_DISTRO" in
  kilted) VENV="${VENV:-$ROOT/.venv}" ;;
  jazzy) VENV="${VENV:-$ROOT/.venv-$ROS_DISTRO}" ;;
  *) echo "error: ROS_DISTRO=$ROS_DISTRO is not supported (kilted or jazzy)" >&2; exit 2 ;;
esac
STAMP="$VENV/.setup-stamp"
BENCH=0
FORCE=0
for arg in "$@"; do
  case "$arg" in
    --bench) BENCH=1 ;;
    --force) FORCE=1 ;;
    *) echo "unknown argument: $arg" >&2; exit 2 ;;
  esac
done

# Anything that starts DDS must stay on loopback; rclpy.init needs a writable log dir.
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
export ROS_LOG_DIR="${ROS_LOG_DIR:-$(mktemp -d -t rdr-roslog.XXXXXX)}"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_PROGRESS_BAR=off

log() { printf '[setup_venv] %s\n' "$*"; }
# pip install, quiet; drops the warnings about configured-but-missing local indexes.
pip_install() {
  "$PY" -m pip install -q "$@" 2> >(grep -v "^WARNING: Location '.*' is ignored" >&2)
}

REQS=("requirements/ros-$ROS_DISTRO.txt" requirements/base.txt requirements/test.txt requirements/doc.txt)
# A venv once set up with --bench stays a bench venv.
[[ -f "$VENV/.bench" ]] && BENCH=1
[[ $BENCH == 1 ]] && REQS+=(requirements/bench.txt)

# --- what changed? ------------------------------------------------------------
hash_files() {  # hash_files PATH... (relative to ROOT; missing paths are skipped)
  (cd "$ROOT" && { find "$@" -type f 2>/dev/null || true; } | LC_ALL=C sort | xargs -r sha256sum) \
    | sha256sum | cut -d' ' -f1
}
# Environment = interpreter + pins + interface package; project = its packaging files.
ENV_HASH="distro=$ROS_DISTRO,bench=$BENCH,$(hash_files tools/setup_venv.sh "${REQS[@]}" robot_dynamics_interfaces \
  "tools/vendor/control_msgs/$ROS_DISTRO")"
PROJ_HASH="$(hash_files setup.py setup.cfg pyproject.toml resource package.xml launch config)"
OLD_ENV="" OLD_PROJ=""
if [[ $FORCE == 0 && -x "$VENV/bin/python" && -f "$STAMP" ]]; then
  { read -r OLD_ENV || true; read -r OLD_PROJ || true; } <"$STAMP"
fi
if [[ "$OLD_ENV" == "$ENV_HASH" && "$OLD_PROJ" == "$PROJ_HASH" ]]; then
  log "up to date ($VENV)"
  exit 0
fi
START=$SECONDS
rm -f "$STAMP"
PY="$VENV/bin/python"

pyver() { "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || true; }

create_venv() {
  if [[ -z "${PYTHON:-}" ]]; then
    if command -v python3.11 >/dev/null; then PYTHON=python3.11; else PYTHON=python3; fi
  fi
  if [[ "$(pyver "$PYTHON")" != 3.11 ]]; then
    echo "error: $PYTHON is not Python 3.11; the ROS 2 $ROS_DISTRO wheels need CPython 3.11 (set PYTHON=...)" >&2
    exit 1
  fi
  if [[ -x "$PY" && "$(pyver "$PY")" != 3.11 ]]; then
    log "existing venv has the wrong Python; recreating"
    rm -rf "$VENV"
  fi
  if [[ ! -x "$PY" ]]; then
    log "creating $VENV with $PYTHON ($("$PYTHON" -V 2>&1))"
    "$PYTHON" -m venv "$VENV"
  fi
}

install_pins() {
  local args=() r
  for r in "${REQS[@]}"; do args+=(-r "$ROOT/$r"); done
  log "installing pinned requirements: ${REQS[*]}"
  pip_install "${args[@]}"
  # Which distribution this venv holds (the cross-distribution tests find the other venv by it).
  echo "$ROS_DISTRO" >"$VENV/.ros-distro"
  if [[ $BENCH == 1 ]]; then touch "$VENV/.bench"; fi
  # The unrelated PyPI package 'launch' would shadow ROS's launch module (ROS's own, installed
  # by hand from source for the ros2 command line, has the same name and is kept).
  if "$PY" -m pip show -q launch >/dev/null 2>&1 \
      && ! "$PY" -c 'from launch import LaunchDescription' >/dev/null 2>&1; then
    log "removing unrelated PyPI package 'launch'"
    "$PY" -m pip uninstall -y -q launch
  fi
}

# The wheels' rosidl_generator_py CMake exports carry the wheel builder's include
# paths (/opt/python/cp311-cp311/...): point them at this venv's Python and numpy.
patch_rosidl_exports() {
  "$PY" - <<'EOF'
import glob, os, sys, sysconfig
import numpy
py_inc = sysconfig.get_paths()["include"]
np_inc = numpy.get_include()
if not os.path.isfile(os.path.join(py_inc, "Python.h")):
    sys.exit(f"error: Python headers missing in {py_inc} (install python3.11-dev)")
old_np = "/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include"
old_py = "/opt/python/cp311-cp311/include/python3.11"
files = glob.glob(os.path.join(sys.prefix, "share", "*", "cmake",
                               "export_*__rosidl_generator_pyExport.cmake"))
patched = 0
for f in files:
    with open(f) as fh:
        s = fh.read()
    t = s.replace(old_np, np_inc).replace(old_py, py_inc)
    if t != s:
        with open(f, "w") as fh:
            fh.write(t)
        patched += 1
print(f"[setup_venv] rosidl_generator_py CMake exports: {len(files)} found, {patched} patched")
EOF
}

# build_interfaces NAME SOURCE: an ament_cmake interface package, built into the venv prefix.
build_interfaces() {
  local name="$1" source="$2" build="$VENV/.build/$1"
  log "building $name into the venv (cmake)"
  rm -rf "$build"
  mkdir -p "$build"
  if ! (
    export CMAKE_PREFIX_PATH="$VENV" AMENT_PREFIX_PATH="$VENV"
    cmake -S "$source" -B "$build" -DCMAKE_INSTALL_PREFIX="$VENV" \
      -DPython3_EXECUTABLE="$PY" -DBUILD_TESTING=OFF \
      && cmake --build "$build" -j"$(nproc 2>/dev/null || echo 2)" \
      && cmake --install "$build"
  ) >"$build.log" 2>&1; then
    tail -n 60 "$build.log" >&2
    echo "error: $name build failed (full log: $build.log)" >&2
    exit 1
  fi
}

# Make the venv usable as a colcon/ament underlay, like /opt/ros/<distro>:
#   source .venv/setup.bash   (activates the venv, sets AMENT_PREFIX_PATH/CMAKE_PREFIX_PATH)
write_underlay_scripts() {
  cat >"$VENV/local_setup.sh" <<EOF
# Generated by tools/setup_venv.sh: adds this venv's ROS prefix to the environment.
_rdr_prefix="$VENV"
for _rdr_var in AMENT_PREFIX_PATH CMAKE_PREFIX_PATH; do
  eval "_rdr_val=\\\${\$_rdr_var:-}"
  case ":\$_rdr_val:" in
    *":\$_rdr_prefix:"*) ;;
    *) eval "export \$_rdr_var=\"\$_rdr_prefix\\\${_rdr_val:+:\\\$_rdr_val}\"" ;;
  esac
done
case ":\$PATH:" in *":\$_rdr_prefix/bin:"*) ;; *) export PATH="\$_rdr_prefix/bin:\$PATH" ;; esac
# DDS discovery stays on this machine unless the caller chose otherwise.
export ROS_AUTOMATIC_DISCOVERY_RANGE="\${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}"
unset _rdr_prefix _rdr_var _rdr_val
EOF
  printf '# Generated by tools/setup_venv.sh\n. "%s/local_setup.sh"\n' "$VENV" >"$VENV/local_setup.bash"
  cat >"$VENV/setup.bash" <<EOF
# Generated by tools/setup_venv.sh: the ROS 2 underlay of robot_dynamics_ros (bash).
. "$VENV/bin/activate"
. "$VENV/local_setup.sh"
EOF
  cp "$VENV/setup.bash" "$VENV/setup.sh"
}

# Editable install (PEP 660): code changes are live and console scripts land in
# .venv/bin. Editable installs skip setup.py's data_files and setup.cfg's script
# directory, so the rest of an ament_python package's install layout is made here,
# as colcon (without --symlink-install) makes it, so that ros2launch, ros2run and
# ament_index_python find the package:
#   share/ament_index/resource_index/packages/robot_dynamics_ros   (the index entry)
#   share/robot_dynamics_ros/{package.xml, launch/*, config/**}    (copies: ros2launch's
#       os.walk does not follow directory symlinks)
#   lib/robot_dynamics_ros/<console script>                        (what `ros2 run` runs)
# test/test_ros_install_layout.py checks this layout the way those tools look it up.
install_project() {
  if [[ ! -f "$ROOT/setup.py" ]]; then
    log "no setup.py yet: project not installed"
    return
  fi
  log "pip install -e . (+ the ament_python layout: share/, lib/robot_dynamics_ros/)"
  pip_install --no-deps --no-build-isolation --use-pep517 -e "$ROOT"
  local share="$VENV/share/robot_dynamics_ros" lib="$VENV/lib/robot_dynamics_ros"
  local index="$VENV/share/ament_index/resource_index/packages"
  rm -rf "$share" "$lib"
  mkdir -p "$share" "$lib" "$index"
  cp "$ROOT/resource/robot_dynamics_ros" "$index/robot_dynamics_ros"
  cp "$ROOT/package.xml" "$share/"
  local item
  for item in launch config; do
    if [[ -d "$ROOT/$item" ]]; then cp -R "$ROOT/$item" "$share/$item"; fi
  done
  local script
  for script in $("$PY" -c 'from importlib.metadata import distribution
for ep in distribution("robot_dynamics_ros").entry_points:
    if ep.group == "console_scripts":
        print(ep.name)'); do
    cp "$VENV/bin/$script" "$lib/$script"
  done
}

if [[ "$OLD_ENV" != "$ENV_HASH" ]]; then
  create_venv
  install_pins
  patch_rosidl_exports
  build_interfaces robot_dynamics_interfaces "$ROOT/robot_dynamics_interfaces"
  build_interfaces control_msgs "$ROOT/tools/vendor/control_msgs/$ROS_DISTRO"
  write_underlay_scripts
fi
install_project
"$PY" -c "import rclpy, robot_dynamics_interfaces.srv, control_msgs.action, trajectory_msgs.msg, numpy, scipy"

# Compile the numba kernels into the user's cache once, now, so that no first call (make demo,
# make test, a node's first message) compiles (robot-dynamics compile says where and how long),
# and build them as extensions that a process loads without importing numba (numba.pycc: needs
# the C compiler; where it cannot build, the command says why and numba's cache serves).
if [[ -x "$VENV/bin/robot-dynamics" ]]; then
  log "compiling the kernels (robot-dynamics compile)"
  "$VENV/bin/robot-dynamics" compile
fi

printf '%s\n%s\n' "$ENV_HASH" "$PROJ_HASH" >"$STAMP"
log "done in $((SECONDS - START)) s"
