"""
In-memory generated models, called like the core's functions.

``generated_model(model)`` generates and compiles the straight-line module of a model once (kept
in the model's cache) and calls it like the core's functions (the nodes'
``use_generated_model``).
"""
from __future__ import annotations

import json
import math
import threading
import types

import numpy as np

from ..core.inputs import joint_arrays
from ..core.model.cache import model_constant
from .generate import GeneratedCode, generate

_BY_DESCRIPTION: dict[tuple[str, str], "GeneratedModel"] = {}
_KEPT_DESCRIPTIONS = 16
_LOCK = threading.Lock()


class GeneratedModel:
    """
    The compiled functions of one robot, called like the core's (without the model argument).

    ``rnea(q, qd, qdd)``, ``nonlinear_effects(q, qd)``, ``gravity_torques(q)``, ``mass_matrix(q)``
    and ``forward_dynamics(q, qd, tau)`` accept one configuration (n,) or a batch (N, n), check
    their arguments as the core does (same ValueError messages), and return arrays of the core's
    shapes.  ``module`` holds the raw generated functions (one configuration, sequences of n
    floats, no checks): the fastest path, e.g. ``module.rnea(q, qd, qdd)``.
    Gravity, rotors and friction are those of the model it was generated from (the core's
    ``gravity=`` argument has no counterpart here).
    """

    def __init__(self, model, code: GeneratedCode):
        self.model = model
        self.code = code
        self.name, self.n = code.robot, len(code.joint_names)
        self.joint_names = code.joint_names
        self.counts = code.counts
        module = types.ModuleType(f"robot_dynamics_generated_{code.robot}")
        exec(compile(code.source, f"<generated dynamics of {code.robot}>", "exec"),
             module.__dict__)
        self.module = module

    def _call(self, fn, **arrays):
        # Fast path for the common case, one finite configuration; anything else (batches, wrong
        # shapes, non-finite values) goes through the core's checks and messages.
        lists = [np.asarray(a, dtype=float).tolist() for a in arrays.values()]
        single = all(type(x) is list and len(x) == self.n and type(x[0]) is float for x in lists)
        if single and math.isfinite(sum(map(sum, lists))):
            return fn(*lists)
        args, batched = joint_arrays(self.model, **arrays)
        if not batched:
            return fn(*args)
        if args[0].shape[0] == 0:
            return np.zeros((0,) + fn(*(np.zeros(self.n) for _ in args)).shape)
        return np.array([fn(*row) for row in zip(*(a.tolist() for a in args))])

    def rnea(self, q, qd, qdd) -> np.ndarray:
        return self._call(self.module.rnea, q=q, qd=qd, qdd=qdd)

    def nonlinear_effects(self, q, qd) -> np.ndarray:
        return self._call(self.module.nonlinear_effects, q=q, qd=qd)

    def gravity_torques(self, q) -> np.ndarray:
        return self._call(self.module.gravity_torques, q=q)

    def mass_matrix(self, q) -> np.ndarray:
        return self._call(self.module.mass_matrix, q=q)

    def forward_dynamics(self, q, qd, tau) -> np.ndarray:
        """
        Return qdd = M(q)^-1 (tau - n(q, qd)).

        Turney et al. 1980, Sect. 7, TML's forward-dynamics recipe.
        """
        (q, qd, tau), batched = joint_arrays(self.model, q=q, qd=qd, tau=tau)
        rhs = tau - self.nonlinear_effects(q, qd)
        M = self.mass_matrix(q)
        return np.linalg.solve(M, rhs[..., None])[..., 0] if batched else np.linalg.solve(M, rhs)

    def __repr__(self) -> str:
        return f"GeneratedModel({self.name!r}, n={self.n}, rnea: {self.counts['rnea']})"


def _compiled_for_description(model, grouping: str) -> GeneratedModel:
    """
    Return the compiled module shared by all models with ``model``'s description.

    Generation takes tens of milliseconds: models with equal descriptions (a node rebuilding its
    model when the payload changes back, two nodes on one robot) share one compiled module.
    """
    key = (json.dumps(model.to_dict(), sort_keys=True, default=float), grouping)
    with _LOCK:
        compiled = _BY_DESCRIPTION.get(key)
    if compiled is None:
        compiled = GeneratedModel(model, generate(model, grouping))
        with _LOCK:
            if len(_BY_DESCRIPTION) >= _KEPT_DESCRIPTIONS:
                _BY_DESCRIPTION.pop(next(iter(_BY_DESCRIPTION)))
            compiled = _BY_DESCRIPTION.setdefault(key, compiled)
    return compiled


def generated_model(model, grouping: str = "full") -> GeneratedModel:
    """
    Return the generated functions of ``model``.

    They are generated and compiled on first use for its description and grouping, and kept in
    the model's cache (``core.model.cache``).
    """
    return model_constant(model, ("generated_model", grouping),
                          lambda m: _compiled_for_description(m, grouping))
