"""
Sphinx configuration of the robot_dynamics_ros documentation (rosdoc2 layout).

``rosdoc2 build --package-path .`` wraps this file (it executes it, then adds autodoc, intersphinx,
the Read the Docs theme and myst-parser); ``test/test_doc.py`` runs that build with every warning
treated as an error.  The pages are Markdown (myst-parser); the Python API pages are generated at
build time under ``api/`` (one page per module, as rosdoc2's own sphinx-apidoc run makes them), so
nothing generated is kept in the repository.
"""
import importlib
import os
import shutil

project = "robot_dynamics_ros"
author = "robot_dynamics_ros developers"
copyright = "robot_dynamics_ros developers, Apache-2.0"  # noqa: A001 (Sphinx's name)

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx_rtd_theme"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
html_theme = "sphinx_rtd_theme"
# rosdoc2's wrapper adds intersphinx; this documentation links to nothing outside it, and a
# build must not need the network.
intersphinx_mapping = {}
intersphinx_disabled_reftypes = ["*"]

# What rosdoc2 generates beside this project, which these pages replace: its copy of doc/ as
# user_docs (these same pages a second time), the standard documents (the README's links point
# into the repository, not into the built site), and its own sphinx-apidoc output (the API pages
# are made under api/ below, for plain Sphinx builds too).
exclude_patterns = [
    "_build", "user_docs", "user_docs*.rst", "standards.rst", "standard_docs",
    "__readme_include.rst", "modules.rst", "robot_dynamics_ros*.rst",
    "images/README.md",   # where each picture comes from, for the repository's readers
]

myst_heading_anchors = 3
# Package pages document what the package itself defines; re-exported names are documented
# where they are defined (else every name of core.__all__ would be described twice).
autodoc_default_options = {"members": True, "show-inheritance": True, "ignore-module-all": True}
autodoc_member_order = "bysource"
autodoc_typehints = "none"
# The ROS packages the nodes import come from a ROS installation (or the venv's wheels); where
# they are missing the API pages are still built, without the node modules' members.
autodoc_mock_imports = []
for _name in ("rclpy", "rosgraph_msgs", "sensor_msgs", "std_msgs", "trajectory_msgs",
              "diagnostic_msgs", "geometry_msgs", "builtin_interfaces", "rcl_interfaces",
              "robot_dynamics_interfaces", "launch", "launch_ros", "ament_index_python"):
    try:
        importlib.import_module(_name)
    except ImportError:
        autodoc_mock_imports.append(_name)


def _write_api_pages(app):
    """Write api/<module>.rst for every module of the package (sphinx-apidoc's layout)."""
    from sphinx.ext import apidoc
    package = importlib.import_module(project)
    out = os.path.join(app.srcdir, "api")
    shutil.rmtree(out, ignore_errors=True)
    apidoc.main(["-q", "--separate", "--module-first", "--no-toc", "--force",
                 "-o", out, os.path.dirname(package.__file__)])


def _literal_bars(app, what, name, obj, options, lines):
    """Read ``|x|`` in docstrings as an absolute value, not as a reST substitution."""
    for k, line in enumerate(lines):
        if "|" in line and not line.lstrip().startswith(("|", "+-")):
            lines[k] = line.replace("|", "\\|")


def setup(app):
    """Generate the API pages first; docstrings are plain text with reST markup where needed."""
    app.connect("builder-inited", _write_api_pages)
    app.connect("autodoc-process-docstring", _literal_bars)
