"""Time-optimal path parameterization (reachability analysis) under torque, velocity and acceleration limits."""
