"""
The ROS 2 nodes: thin adapters that convert messages, call ``robot_dynamics_ros.core`` and publish.

What every node shares, one concern per module:

* ``base``: :class:`~robot_dynamics_ros.nodes.base.DynamicsNode` (the robot, QoS, inputs and
  outputs, diagnostics) and ``main()`` of the node executables;
* ``managed``: :class:`~robot_dynamics_ros.nodes.managed.ManagedDynamicsNode`, the lifecycle;
  ``torque_node``: the torque nodes' effort limits and stop command;
* ``dynamics``: which model and implementation a node computes with (the ``Dynamics`` facade,
  the payload); ``model_settings``: payload and gravity parameters on the robot;
* ``parameter_table`` (the tables in ``params/``, the reference page) and ``parameters``:
  declaration with descriptors (ranges), checks and validation hooks;
* ``watchdog``: input timeout, per-input counts, throttled warnings about rejected inputs;
* ``outputs``: the JointState + Float64MultiArray effort outputs;
* ``errors``: the one table from core errors to log and service messages, and the guards.

The nodes: ``gravity_compensation``, ``inverse_dynamics``, ``dynamics_service``,
``trajectory_scaler``.  ``robot_dynamics_ros.nodes.kinds.NODE_TYPES`` lists them by name (the one
place where nodes are loaded by name).
"""
