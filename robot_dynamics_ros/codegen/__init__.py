"""
Code generation: straight-line Python, C or C++ for one robot's dynamics (Renaud 1987).

The functions are rnea, nonlinear_effects, gravity_torques and mass_matrix, with operation counts.

    from robot_dynamics_ros.codegen import generate, generated_model
    code = generate(model)                 # .source (a module), .counts (operation counts)
    dyn = generated_model(model)           # compiled and cached: dyn.rnea(q, qd, qdd), ...

Modules: ``expr`` (expression DAG: folding, hashing, counting; nodes with arithmetic operators),
``graph_dynamics`` (the core's Newton-Euler recursion, Renaud's steps (0)-(10), on the graph; its
constants are ``core.model.bodies``), ``writer`` (Python source, and the choice of named
sub-expressions both printers share), ``c_header`` (the same graphs as a C99 or C++17 header:
``generate_header(model, "cpp")``), ``generate``, ``loader``
(in-memory compiled models).
"""
from .expr import Graph, OpCount
from .generate import FUNCTIONS, CodegenError, GeneratedCode, generate
from .loader import GeneratedModel, generated_model
from ..core.model.bodies import GROUPINGS

__all__ = ["generate", "generated_model", "GeneratedModel", "GeneratedCode", "CodegenError",
           "Graph", "OpCount", "FUNCTIONS", "GROUPINGS"]
