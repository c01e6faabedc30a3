"""
Robot descriptions written in xacro, expanded with the ``xacro`` package (the same code as ROS's).

:func:`expand_xacro` returns the URDF text exactly as ``xacro robot.urdf.xacro name:=value ...``
prints it, which is what a launch file's ``Command(["xacro ", path, ...])`` hands to
robot_state_publisher: ``$(find pkg)`` resolves through the ament index (``AMENT_PREFIX_PATH``,
with ``ament_index_python``), ``$(arg name)`` from ``arguments``, ``xacro:include`` and
``xacro.load_yaml`` relative to the file.

xacro evaluates the Python expressions in ``${...}``: expanding a file runs its code, as running
``xacro`` does.  So only descriptions the user names are expanded (a path, the
``robot_description`` parameter, the command line), never text received from the ROS graph on
``/robot_description`` (robot_state_publisher publishes the expanded URDF there).

xacro keeps its state in module globals (file and macro stacks, the substitution arguments), so
expansions are serialised by a lock.
"""
from __future__ import annotations

import threading
from pathlib import Path

from ..errors import RobotDescriptionError

XACRO_SUFFIX = ".xacro"
_LOCK = threading.Lock()


def is_xacro(path) -> bool:
    """Tell whether ``path`` names a xacro file (``robot.urdf.xacro``, ``robot.xacro``)."""
    return str(path).lower().endswith(XACRO_SUFFIX)


def parse_arguments(items, where: str = "xacro argument") -> dict[str, str]:
    """
    Return ``name:=value`` strings (the xacro command line's form) as a mapping.

    Raises RobotDescriptionError naming the item that has no ``:=`` or no name.
    """
    arguments = {}
    for item in items or ():
        name, separator, value = str(item).partition(":=")
        if not separator or not name.strip():
            raise RobotDescriptionError(f"{where} {item!r}: expected name:=value "
                                        "(e.g. ur_type:=ur5e)")
        arguments[name.strip()] = value
    return arguments


def expand_xacro(source, arguments: dict | None = None, label: str | None = None,
                 max_bytes: int | None = None) -> str:
    """
    Return the URDF text of the xacro file ``source`` (a path) expanded with ``arguments``.

    ``source`` may also be xacro XML text (then ``label`` names it and ``$(dirname)`` is not
    available).  Every failure raises RobotDescriptionError naming the file (and the file that
    included it), as ``xacro`` reports it; an output over ``max_bytes`` is refused.
    """
    import xacro
    import xml.parsers.expat
    text_given = isinstance(source, str) and source.lstrip().startswith("<")
    name = label or ("<xacro text>" if text_given else str(source))
    mappings = {str(k): str(v) for k, v in (arguments or {}).items()}
    with _LOCK:
        try:
            if text_given:
                xacro.init_stacks(None)
                doc = xacro.parse(source)
                xacro.process_doc(doc, mappings=mappings)
            else:
                doc = xacro.process_file(str(Path(source).resolve()), mappings=mappings)
            text = doc.toprettyxml(indent="  ")
        except xml.parsers.expat.ExpatError as exc:
            raise RobotDescriptionError(f"{name}: xacro: malformed XML{_included()}: "
                                        f"{exc}") from None
        except Exception as exc:  # noqa: BLE001 -- xacro raises many kinds; each becomes one
            raise RobotDescriptionError(f"{name}: xacro: {_message(exc)}{_included()}") from None
    if max_bytes is not None and len(text) > max_bytes:
        raise RobotDescriptionError(f"{name}: xacro expanded it to {len(text)} characters, more "
                                    f"than a URDF may be ({max_bytes} bytes)")
    return text


def _message(exc: Exception) -> str:
    """Return xacro's message for ``exc`` (XacroException repeats its cause; keep one)."""
    cause = getattr(exc, "exc", None)
    text = str(exc) or type(exc).__name__
    if cause is not None and str(cause) and str(cause) in text:
        text = str(cause)          # XacroException's text repeats its cause's
    if "ArgException" in (type(exc).__name__, type(cause).__name__):
        text = f"undefined argument '{text}' (give it as NAME:=VALUE)"
    elif text.startswith("Undefined substitution argument"):
        text += " (give it as NAME:=VALUE)"
    elif cause is not None and type(cause).__name__ == "PackageNotFoundError":
        text = (f"$(find): {cause} (AMENT_PREFIX_PATH names the prefixes searched: source the "
                "workspace that holds the package)")
    elif isinstance(cause, ImportError):
        text = f"$(find) needs ament_index_python (ROS 2): {cause}"
    return text if len(text) <= 500 else text[:500] + " ..."


def _included() -> str:
    """Say in which file (and included from where) xacro was when it failed."""
    import xacro
    stack = [f for f in (xacro.filestack or []) if f]
    if len(stack) < 2:
        return ""
    return " (in " + ", included from ".join(reversed(stack[1:])) + ")"
