"""`robot-dynamics compile`, and the command line importing only the command it runs."""

import subprocess
import sys
import textwrap

from robot_dynamics_ros.commands.cli import COMMANDS
from robot_dynamics_ros.commands.cli import main as cli_main
from robot_dynamics_ros.core import jit
from robot_dynamics_ros.core.precompile import KERNELS


def test_compile_names_each_kernel_the_cache_and_the_time(capsys):
    assert cli_main(["compile"]) == 0
    cli_main(["compile"])               # everything is in this process now: all loaded
    out = capsys.readouterr().out.splitlines()
    summary = [line for line in out if "kernels," in line]
    assert len(summary) == 2 and " 0 compiled" in summary[-1] and summary[-1].endswith(" s")
    assert str(jit.cache_directory()) in out[0]
    for kernel in KERNELS:
        assert sum(kernel.name in line and kernel.where in line for line in out) == 2


def test_a_command_imports_its_own_module_only_and_help_lists_every_command():
    script = textwrap.dedent("""
        import sys
        from robot_dynamics_ros.commands.cli import main
        assert main(["check", "planar2"]) == 0
        loaded = [m for m in sys.modules if m.startswith("robot_dynamics_ros.commands.")]
        print(" ".join(sorted(loaded)))
        print("scipy.signal" in sys.modules, "robot_dynamics_ros.core.simulation" in sys.modules)
        """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    modules, others = out.stdout.splitlines()[-2:]
    assert modules.split() == ["robot_dynamics_ros.commands.check",       # (and the CLI's own
                               "robot_dynamics_ros.commands.cli",         # module)
                               "robot_dynamics_ros.commands.robot_argument"]
    assert others == "False False"
    shown = subprocess.run([sys.executable, "-m", "robot_dynamics_ros.commands.cli", "--help"],
                           capture_output=True, text=True, timeout=300)
    assert shown.returncode == 0
    for name in COMMANDS:
        module = __import__(f"robot_dynamics_ros.commands.{name}", fromlist=["HELP"])
        assert name in shown.stdout and " ".join(module.HELP.split()[:4]) in " ".join(
            shown.stdout.split())


def test_bag_info_does_not_import_the_dynamics_and_process_keeps_its_defaults():
    script = textwrap.dedent("""
        import sys
        from robot_dynamics_ros.commands.cli import main
        main(["bag", "info", "/nonexistent_bag_for_the_test"])
        print("robot_dynamics_ros.bags.process" in sys.modules, "scipy" in sys.modules)
        """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=300)
    assert out.stdout.split()[-2:] == ["False", "False"], out.stderr
    import argparse

    from robot_dynamics_ros.bags.process import DEFAULT_NAMESPACE, DEFAULT_REFERENCE
    from robot_dynamics_ros.commands import bag
    parser = argparse.ArgumentParser()
    bag.add_arguments(parser)
    args = parser.parse_args(["process", "in", "out", "--robot", "puma560"])
    assert (args.reference, args.namespace) == (DEFAULT_REFERENCE, DEFAULT_NAMESPACE)
