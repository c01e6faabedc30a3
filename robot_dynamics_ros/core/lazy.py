"""
A package's public names imported at their first use (PEP 562), so importing one part is cheap.

``import robot_dynamics_ros.core.errors`` runs ``core/__init__.py`` first; if that imported every
algorithm, the simulator (scipy.integrate), the scaling (scipy.interpolate) and identification
(scipy.signal), every command would pay for all of them (1 s of a 2 s `robot-dynamics scale`:
issue 27).  A package lists where each name lives and gets a module ``__getattr__`` that
imports it when first asked for (then it is an ordinary global of the package).
"""
from __future__ import annotations

import importlib


def exports(package: str, where: dict) -> tuple:
    """
    Return (``__getattr__``, ``__dir__``, ``__all__``) of ``package`` for ``where``.

    ``where`` maps a relative module (".algorithms") to the names the package exports from it.
    """
    module_of = {name: module for module, names in where.items() for name in names}
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str):
        module = module_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    def __dir__():
        return sorted(set(namespace) | set(module_of))

    return __getattr__, __dir__, sorted(module_of)
