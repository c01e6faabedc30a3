"""
Service requests holding a trajectory, refused by size before rclpy makes Python objects of them.

rclpy takes a service request from the middleware as the C message and converts all of it to
Python objects before any code of the node runs: a request of a million trajectory points cost
~18 s and ~1 GB in that conversion alone (bench/bench_oversize_request.py).  Topics have a raw
take (``raw=True``, checked by ``messages.serialized.trajectory_size``); services have none.  But
rclpy converts through the request class's metaclass: ``_CREATE_ROS_MESSAGE`` and
``_DESTROY_ROS_MESSAGE`` make and free the C message the middleware fills, ``_CONVERT_TO_PY`` (a C
function of rosidl_generator_py, one per message type) turns it into the Python object.  A service
made by :func:`bounded_trajectory_service` takes its requests through a stand-in request class with
the same C message and a converter of its own: it reads the numbers of joint names and points from
the C message (rosidl_runtime_c's sequence layout: data pointer, size, capacity) and calls the
type's own converter only when they are within the bounds; an oversize request becomes an
:class:`Oversize` marker, which the service answers at once with ``success: false``.

What remains is the middleware's: the serialized request it received and the C message it
deserialized into (rmw does that before rclpy sees the request; measured in the bench).  Where the
hooks are not there (another rclpy or rosidl generation), the service is a plain one and the node's
own check after conversion still refuses the request.
"""
from __future__ import annotations

import ctypes
from typing import NamedTuple

from ..core.errors import InputError


class _Sequence(ctypes.Structure):
    """rosidl_runtime_c's sequence (and String): data, size, capacity."""

    _fields_ = [("data", ctypes.c_void_p), ("size", ctypes.c_size_t),
                ("capacity", ctypes.c_size_t)]


class _Time(ctypes.Structure):
    _fields_ = [("sec", ctypes.c_int32), ("nanosec", ctypes.c_uint32)]


class _Header(ctypes.Structure):
    _fields_ = [("stamp", _Time), ("frame_id", _Sequence)]


class _JointTrajectory(ctypes.Structure):
    """trajectory_msgs__msg__JointTrajectory: header, joint_names, points."""

    _fields_ = [("header", _Header), ("joint_names", _Sequence), ("points", _Sequence)]


class Oversize(NamedTuple):
    """A request too large to convert: what the service answers instead."""

    reason: str


_TO_PYTHON = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p)
_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype, _capsule_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


def _hooks(request_class):
    """Return the request class's metaclass after its type support is loaded, or None."""
    meta = type(request_class)
    try:
        meta.__import_type_support__()
        hooks = (meta._CREATE_ROS_MESSAGE, meta._DESTROY_ROS_MESSAGE, meta._CONVERT_TO_PY)
    except AttributeError:
        return None
    return meta if all(hooks) else None


def _stand_in(srv_type, name: str, max_names: int, max_points: int):
    """Return a service type whose Request converts only requests within the bounds, or None."""
    fields = list(srv_type.Request.get_fields_and_field_types().items())
    meta = _hooks(srv_type.Request)
    if meta is None or not fields or fields[0][1] != "trajectory_msgs/JointTrajectory":
        return None          # the layout read below is the trajectory's as first member
    capsule = meta._CONVERT_TO_PY
    convert = _TO_PYTHON(_capsule_pointer(capsule, _capsule_name(capsule)))

    def checked(message):
        trajectory = _JointTrajectory.from_address(message)
        names, points = trajectory.joint_names.size, trajectory.points.size
        if names > max_names or points > max_points:
            return Oversize(f"{name}: {names} joint names and {points} points, more than the "
                            f"{max_names} and {max_points} accepted (refused unconverted)")
        return convert(message)

    thunk = _TO_PYTHON(checked)
    namespace = {"_CREATE_ROS_MESSAGE": meta._CREATE_ROS_MESSAGE,
                 "_DESTROY_ROS_MESSAGE": meta._DESTROY_ROS_MESSAGE,
                 "_CONVERT_TO_PY": _capsule_new(ctypes.cast(thunk, ctypes.c_void_p), None, None),
                 "_thunk": thunk}                      # the C function must outlive the service
    request = type("BoundedRequestMeta", (type,), namespace)("BoundedRequest", (), {})
    return type(type(srv_type))(srv_type.__name__, (), {
        "Request": request, "Response": srv_type.Response,
        "Event": getattr(srv_type, "Event", None)})


def bounded_trajectory_service(node, srv_type, name: str, callback, max_names: int,
                               max_points: int):
    """
    Create ``node``'s service ``name`` whose request starts with a JointTrajectory, size-checked.

    ``callback(request, response)`` as for ``node.create_service``: it receives an
    :class:`Oversize` for a request of more than ``max_names`` joint names or ``max_points``
    points, converted by nothing (:func:`refuse_oversize` raises its reason).
    """
    service = node.create_service(srv_type, name, callback)
    stand_in = _stand_in(srv_type, service.service_name, max_names, max_points)
    if stand_in is not None:
        service.srv_type = stand_in     # what the executor takes the requests as (Request)
    return service


def refuse_oversize(request):
    """Raise InputError with the reason if ``request`` is an :class:`Oversize` marker."""
    if isinstance(request, Oversize):
        raise InputError(request.reason)
