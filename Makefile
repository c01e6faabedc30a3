# robot_dynamics_ros: developer entry points.  `make test` is what CI runs.
VENV := .venv
PY   := $(VENV)/bin/python

# Every process that may start DDS: loopback only, own domain, writable log dir.
export ROS_AUTOMATIC_DISCOVERY_RANGE := LOCALHOST
export RMW_IMPLEMENTATION := rmw_fastrtps_cpp
ROS_DOMAIN_ID ?= 42
ROS_LOG_DIR ?= $(or $(TMPDIR),/tmp)/robot_dynamics_ros-roslog
export ROS_DOMAIN_ID ROS_LOG_DIR
# Lets ament_index_python find the packages installed into the venv prefix.
export AMENT_PREFIX_PATH := $(CURDIR)/$(VENV)$(if $(AMENT_PREFIX_PATH),:$(AMENT_PREFIX_PATH))

.PHONY: venv bench-venv demo test bench colcon-check clean

venv:
	bash tools/setup_venv.sh

bench-venv:
	bash tools/setup_venv.sh --bench

demo: venv
	$(VENV)/bin/robot-dynamics demo

test: venv
	$(PY) -m pytest -q test

bench: bench-venv
	@if [ -f bench/run_all.py ]; then $(PY) bench/run_all.py; \
	else echo "bench/run_all.py not found"; fi

colcon-check: venv
	bash tools/colcon_check.sh

clean:
	rm -rf $(VENV)
