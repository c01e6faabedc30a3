"""The YAML 1.2 loader of robot and trajectory files against hostile and sloppy YAML."""

import time

import pytest

from robot_dynamics_ros.core.model.robot_file import MAX_FILE_BYTES
from yaml_texts import PLANAR, error_text, load_text


def test_repeated_key_in_a_one_line_flow_mapping_is_an_error(tmp_path):
    """D1: `dh: {a: 0.4318, ..., a: 9.0}` was accepted, last value winning."""
    text = PLANAR.replace("dh: {a: 1.0,", "dh: {a: 1.0, a: 9.0,", 1)
    assert text != PLANAR
    message = error_text(tmp_path, text)
    assert "duplicate key 'a'" in message and "column" in message


def test_file_that_is_not_utf8_is_a_description_error(tmp_path):
    """D3: raised UnicodeDecodeError."""
    message = error_text(tmp_path,
                         PLANAR.encode("utf-8").replace(b"planar2", b"planar\xff\xfe", 1))
    assert "UTF-8" in message


def test_deep_nesting_is_refused_without_recursion_error(tmp_path):
    """D4: nesting deeper than ~500 levels raised RecursionError."""
    deep = "[" * 5000 + "]" * 5000
    message = error_text(tmp_path, PLANAR.replace("com: [-0.5, 0.0, 0.0]", f"com: {deep}", 1))
    assert "nested deeper" in message


def test_alias_bombs_are_refused_before_expansion(tmp_path):
    """D5: a 1 KB alias bomb expanded into a 39 MB error message (9 levels: 100 s, 5.8 GB)."""
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, 10):
        refs = ", ".join([f"*a{level - 1}"] * 9)
        lines.append(f"a{level}: &a{level} [{refs}]")
    start = time.process_time()
    message = error_text(tmp_path, "\n".join(lines) + "\n" + PLANAR)
    assert "aliases" in message and "not supported" in message and len(message) < 400
    assert time.process_time() - start < 5.0      # a bound on the damage, not a benchmark


def test_yaml_merge_keys_say_what_is_not_supported(tmp_path):
    text = PLANAR.replace("link:", "link:\n      <<: {mass: 1.0}\n", 1)
    message = error_text(tmp_path, text)
    assert "merge keys" in message


def test_file_size_is_bounded(tmp_path):
    """D6: a 50 MB file took 32-36 s; now refused before parsing."""
    big = PLANAR + "\n# " + "x" * MAX_FILE_BYTES + "\n"
    message = error_text(tmp_path, big)
    assert "larger than" in message


@pytest.mark.parametrize("value, fragment", [("1:30", "link.mass"), ("1_000.5", "link.mass"),
                                             ("0b101", "link.mass"), ("yes", "link.mass")])
def test_yaml_1_1_scalars_are_not_numbers(tmp_path, value, fragment):
    """D8: `mass: 1:30` was read as 90 kg and `1_000.5` as 1000.5 (YAML 1.1 forms)."""
    message = error_text(tmp_path, PLANAR.replace("mass: 50.0", f"mass: {value}", 1))
    assert fragment in message and "must be a number" in message


def test_yaml_1_2_numbers_are_read(tmp_path):
    text = PLANAR.replace("mass: 50.0", "mass: 5e1", 1).replace("iyy: 10.0", "iyy: 010", 1)
    link = load_text(tmp_path, text).to_dict()["joints"][1]["link"]
    assert link["mass"] == 50.0
    assert link["inertia"]["iyy"] == 10.0     # a leading zero is decimal in YAML 1.2, not octal


def test_dump_yaml_writes_what_safe_dump_writes_with_the_c_emitter():
    import yaml as pyyaml

    from robot_dynamics_ros.core import yaml_loader
    data = {"joint_names": ["a", "b"], "points": [{"time_from_start": 0.1 * k,
                                                   "positions": [1e-17 * k, -2.5 / 3.0]}
                                                  for k in range(5)]}
    text = yaml_loader.dump_yaml(data, default_flow_style=None, sort_keys=False)
    assert pyyaml.safe_load(text) == data
    assert text == pyyaml.safe_dump(data, default_flow_style=None, sort_keys=False)
    if hasattr(pyyaml, "CSafeDumper"):
        assert yaml_loader._DUMPER is pyyaml.CSafeDumper


def _outcome(text, fast):
    from robot_dynamics_ros.core.yaml_loader import parse_yaml
    try:
        return parse_yaml(text, fast=fast)
    except Exception as exc:  # noqa: BLE001 -- the outcomes are compared
        return type(exc), str(exc)


def test_libyaml_parses_every_yaml_file_of_the_repository_as_the_python_loader():
    """The oracle: the Python loader (``fast=False``), on 35 robot, trajectory and test files."""
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    files = sorted(root.glob("config/**/*.yaml")) + sorted(root.glob("test/data/**/*.yaml"))
    assert len(files) > 30
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        assert _outcome(text, True) == _outcome(text, False), path


@pytest.mark.parametrize("text", ["[" * 40 + "]" * 40, "a:\n" + "".join(
    " " * k + f"k{k}:\n" for k in range(1, 40)) + " " * 40 + "1\n", "a: 1\na: 2\n",
    "<<: {a: 1}\n", "a: !!int 0x10\n", "a: &x [1]\nb: *x\n", "a: [1, 2\n", "a: 010\nb: no\n"])
def test_libyaml_path_gives_the_python_loaders_errors_and_values(text):
    assert _outcome(text, True) == _outcome(text, False)
