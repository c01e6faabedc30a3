# robot_dynamics_ros: developer entry points.  `make test` is what CI runs (on each distribution).
# ROS_DISTRO chooses the ROS 2 distribution: kilted (the default, the newest supported) or jazzy
# (the LTS), e.g. `make test ROS_DISTRO=jazzy`.  Each has its own venv (.venv for kilted,
# .venv-<distro> for the others) built from requirements/ros-<distro>.txt, side by side.
ROS_DISTRO ?= kilted
VENV := $(if $(filter kilted,$(ROS_DISTRO)),.venv,.venv-$(ROS_DISTRO))
PY   := $(VENV)/bin/python
export ROS_DISTRO

# Every process that may start DDS: loopback only, own domain, writable log dir.
export ROS_AUTOMATIC_DISCOVERY_RANGE := LOCALHOST
export RMW_IMPLEMENTATION := rmw_fastrtps_cpp
ROS_DOMAIN_ID ?= 42
ROS_LOG_DIR ?= $(or $(TMPDIR),/tmp)/robot_dynamics_ros-roslog
export ROS_DOMAIN_ID ROS_LOG_DIR
# Lets ament_index_python find the packages installed into the venv prefix.
export AMENT_PREFIX_PATH := $(CURDIR)/$(VENV)$(if $(AMENT_PREFIX_PATH),:$(AMENT_PREFIX_PATH))

.PHONY: venv bench-venv demo test bench colcon-check clean lint doc

venv:
	VENV=$(CURDIR)/$(VENV) bash tools/setup_venv.sh

bench-venv:
	VENV=$(CURDIR)/$(VENV) bash tools/setup_venv.sh --bench

demo: venv
	$(VENV)/bin/robot-dynamics demo

test: venv
	$(PY) -m pytest -q test

bench: bench-venv
	@if [ -f bench/run_all.py ]; then $(PY) bench/run_all.py; \
	else echo "bench/run_all.py not found"; fi

# The documentation as rosdoc2 builds it (HTML in doc_output/robot_dynamics_ros/index.html).
doc: venv
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/rosdoc2 build --package-path . \
	  --output-directory doc_output --doc-build-directory doc_output/.build \
	  --cross-reference-directory doc_output/.cross_reference

colcon-check: venv
	VENV=$(CURDIR)/$(VENV) bash tools/colcon_check.sh

clean:
	rm -rf $(VENV) doc_output

# ament's linters (the configuration ROS packages use) on PATHS, e.g. `make lint PATHS=robot_dynamics_ros/core`
PATHS ?= robot_dynamics_ros test bench launch setup.py
lint: venv
	$(PY) -c "import sys; from ament_flake8.main import main; sys.exit(main(argv=sys.argv[1:]))" $(PATHS); \
	f=$$?; $(PY) -c "import sys; from ament_pep257.main import main; sys.exit(main(argv=sys.argv[1:]))" $(PATHS); \
	p=$$?; exit $$((f || p))
