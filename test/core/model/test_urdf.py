"""
Bad URDFs: one test per error.

Each is a RobotDescriptionError naming the file, the link or joint and what is wrong (nothing is
built from a bad file).
"""
import re
import warnings

import pytest

from robot_dynamics_ros.core import RobotDescriptionError, RobotModel
from robot_dynamics_ros.core.model import urdf_xml

INERTIAL = ('<inertial><mass value="1.0"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" '
            'izz="0.01"/></inertial>')


LIMIT = '<limit lower="-1" upper="1" velocity="1" effort="10"/>'


def _joint(name, parent, child, jtype="revolute", origin='<origin xyz="0 0 0.1" rpy="0 0 0"/>',
           axis='<axis xyz="0 0 1"/>', limit=LIMIT, extra=""):
    return (f'<joint name="{name}" type="{jtype}"><parent link="{parent}"/><child link="{child}"/>'
            f"{origin}{axis}{limit}{extra}</joint>")


def _robot(*parts, links=("base", "l1", "l2"), inertial=INERTIAL):
    body = "".join(f'<link name="{name}">{inertial}</link>' for name in links) + "".join(parts)
    return f'<?xml version="1.0"?>\n<robot name="arm">{body}</robot>\n'


LINKS = ("base", "l1")
GOOD = _robot(_joint("j1", "base", "l1"), _joint("j2", "l1", "l2"))


def _error(text, tmp_path, **kwargs) -> str:
    path = tmp_path / "arm.urdf"
    path.write_text(text)
    with pytest.raises(RobotDescriptionError) as info:
        RobotModel.from_urdf(path, **kwargs)
    message = str(info.value)
    assert str(path) in message
    return message


def _expect(message, *fragments):
    for fragment in fragments:
        assert re.search(fragment, message), f"{fragment!r} not in {message!r}"


def test_the_good_robot_loads(tmp_path):
    path = tmp_path / "arm.urdf"
    path.write_text(GOOD)
    assert RobotModel.from_urdf(path).joint_names == ("j1", "j2")
    assert RobotModel.from_urdf(GOOD).n == 2          # the XML text itself


def test_malformed_xml(tmp_path):
    _expect(_error(GOOD.replace("</robot>", "</robo>"), tmp_path), "malformed XML", "line")


def test_not_a_robot_element(tmp_path):
    _expect(_error(GOOD.replace("<robot", "<robt").replace("</robot>", "</robt>"), tmp_path),
            "root element must be <robot>")


def test_doctype_and_entities_refused(tmp_path):
    laughs = '<!DOCTYPE r [<!ENTITY a "aaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>\n'
    _expect(_error(GOOD.replace("\n", "\n" + laughs, 1), tmp_path), "DOCTYPE", "not allowed")


def test_file_too_large(tmp_path, monkeypatch):
    monkeypatch.setattr(urdf_xml, "MAX_URDF_BYTES", 200)
    _expect(_error(GOOD, tmp_path), "larger than a URDF may be")


def test_not_utf8(tmp_path):
    path = tmp_path / "arm.urdf"
    path.write_bytes(GOOD.encode("utf-16"))
    with pytest.raises(RobotDescriptionError, match="not UTF-8"):
        RobotModel.from_urdf(path)


def test_unexpanded_xacro_tags(tmp_path):
    text = GOOD.replace('<robot name="arm">',
                        '<robot name="arm" xmlns:xacro="http://www.ros.org/wiki/xacro">'
                        '<xacro:property name="l" value="0.1"/>')
    _expect(_error(text, tmp_path), "unexpanded xacro", "xacro robot.urdf.xacro")


def test_unexpanded_xacro_expression(tmp_path):
    _expect(_error(GOOD.replace('xyz="0 0 0.1"', 'xyz="0 0 ${l}"', 1), tmp_path),
            r"<origin xyz>", r"unexpanded xacro expression")


def test_unknown_root_link(tmp_path):
    _expect(_error(GOOD, tmp_path, root_link="torso"), "root_link 'torso': no such link")


def test_unknown_tip_link(tmp_path):
    _expect(_error(GOOD, tmp_path, tip_link="hand"), "tip_link 'hand': no such link")


def test_tip_not_below_root(tmp_path):
    _expect(_error(GOOD, tmp_path, root_link="l1", tip_link="base"),
            "tip_link 'base' is not below root_link 'l1'")


def test_link_with_two_parents(tmp_path):
    text = _robot(_joint("j1", "base", "l1"), _joint("j2", "l1", "l2"), _joint("j3", "base", "l2"))
    _expect(_error(text, tmp_path), "link 'l2' has two parents", "'j2'", "'j3'")


def test_closed_loop(tmp_path):
    text = _robot(_joint("j1", "base", "l1"), _joint("j2", "l2", "l3"), _joint("j3", "l3", "l2"),
                  links=("base", "l1", "l2", "l3"))
    _expect(_error(text, tmp_path), "closed loop through links", "'l2'", "'l3'")


def test_several_root_links(tmp_path):
    text = _robot(_joint("j1", "base", "l1"), links=("base", "l1", "stray"))
    _expect(_error(text, tmp_path), "more than one root link", "'stray'")


def test_joint_naming_an_unknown_link(tmp_path):
    _expect(_error(_robot(_joint("j1", "base", "l1"), _joint("j2", "l1", "l9")), tmp_path),
            "joint 'j2'", "<child link='l9'>: no such link")


def test_missing_limit_on_revolute_joint(tmp_path):
    _expect(_error(_robot(_joint("j1", "base", "l1", limit="")), tmp_path),
            "joint 'j1'", "revolute joint needs <limit")


def test_missing_limit_on_prismatic_joint(tmp_path):
    _expect(_error(_robot(_joint("j1", "base", "l1", "prismatic", limit="")), tmp_path),
            "joint 'j1'", "prismatic joint needs <limit")


def test_continuous_joint_on_the_chain_needs_velocity_and_effort(tmp_path):
    text = _robot(_joint("j1", "base", "l1", "continuous", limit=""), links=LINKS)
    _expect(_error(text, tmp_path),
            "joint 'j1'", "continuous joint on the chain needs <limit velocity effort>")


def test_limit_without_effort(tmp_path):
    text = _robot(_joint("j1", "base", "l1", limit='<limit lower="-1" upper="1" velocity="1"/>'))
    _expect(_error(text, tmp_path), "joint 'j1' <limit effort>: missing")


def test_zero_effort_on_the_chain(tmp_path):
    text = _robot(_joint("j1", "base", "l1", limit=LIMIT.replace('"10"', '"0"')), links=LINKS)
    _expect(_error(text, tmp_path), "joint 'j1'", "<limit effort>: must be > 0")


def test_lower_limit_above_upper(tmp_path):
    limit = '<limit lower="1" upper="-1" velocity="1" effort="1"/>'
    text = _robot(_joint("j1", "base", "l1", limit=limit), links=LINKS)
    _expect(_error(text, tmp_path), "joint 'j1'", r"lower \(1\) is above upper \(-1\)")


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-Infinity"])
def test_non_finite_numbers(tmp_path, value):
    _expect(_error(GOOD.replace('xyz="0 0 0.1"', f'xyz="0 {value} 0.1"', 1), tmp_path),
            "joint 'j1' <origin xyz>", "must be finite")


def test_number_beyond_the_float_range(tmp_path):
    _expect(_error(GOOD.replace('<axis xyz="0 0 1"/>', '<axis xyz="0 0 1e999"/>', 1), tmp_path),
            "joint 'j1' <axis xyz>", "must be finite")


def test_not_a_number(tmp_path):
    _expect(_error(GOOD.replace('value="1.0"', 'value="one"', 1), tmp_path),
            "link 'base'", "<mass value>", "'one' is not a number")


def test_wrong_count_of_numbers(tmp_path):
    _expect(_error(GOOD.replace('rpy="0 0 0"', 'rpy="0 0"', 1), tmp_path),
            "joint 'j1' <origin rpy>", "expected 3 numbers")


def test_out_of_bounds_value(tmp_path):
    _expect(_error(GOOD.replace('value="1.0"', 'value="1e9"', 1), tmp_path),
            "link 'base'", "out of range: at most 1e\\+06 kg")


def test_negative_mass(tmp_path):
    _expect(_error(GOOD.replace('value="1.0"', 'value="-2"', 1), tmp_path),
            "link 'base'", "<mass value>: must be >= 0")


def test_missing_inertia_attribute(tmp_path):
    _expect(_error(GOOD.replace(' ixy="0"', "", 1), tmp_path), "link 'base'",
            "<inertia ixy>: missing")


def test_inconsistent_inertia_and_the_opt_in(tmp_path):
    bad = INERTIAL.replace('izz="0.01"', 'izz="0.05"')         # 0.01 + 0.01 < 0.05
    text = _robot(_joint("j1", "base", "l1"), _joint("j2", "l1", "l2")).replace(INERTIAL, bad)
    _expect(_error(text, tmp_path), "link 'l1'", "physically inconsistent inertia",
            "accept_inconsistent_inertia")
    with pytest.warns(UserWarning, match="link 'l[12]'.*physically inconsistent"):
        model = RobotModel.from_urdf(text, accept_inconsistent_inertia=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert model.with_payload(1.0).n == 2         # the opt-in stays with the model


def test_zero_axis(tmp_path):
    _expect(_error(_robot(_joint("j1", "base", "l1", axis='<axis xyz="0 0 0"/>')), tmp_path),
            "joint 'j1' <axis xyz>", "axis is zero")


@pytest.mark.parametrize("jtype", ["floating", "planar"])
def test_floating_and_planar_joints_on_the_chain(tmp_path, jtype):
    text = _robot(_joint("mount", "base", "l1", jtype, limit=""), _joint("j2", "l1", "l2"))
    _expect(_error(text, tmp_path, tip_link="l2"), f"joint 'mount' is {jtype}", "on the chain",
            "choose a root_link below it")
    assert RobotModel.from_urdf(text, root_link="l1").joint_names == ("j2",)


def test_mimic_joint_on_the_chain(tmp_path):
    mimic = _joint("j2", "l1", "l2", extra='<mimic joint="j1"/>')
    text = _robot(_joint("j1", "base", "l1"), mimic)
    _expect(_error(text, tmp_path), "joint 'j2' mimics 'j1'", "not supported on the chain")


def test_unknown_joint_type(tmp_path):
    _expect(_error(_robot(_joint("j1", "base", "l1", "spherical")), tmp_path),
            "joint 'j1' <joint type>", "must be one of")


def test_duplicate_link_and_joint(tmp_path):
    _expect(_error(_robot(_joint("j1", "base", "l1"), links=("base", "l1", "l1")), tmp_path),
            "link 'l1'", "defined twice")
    _expect(_error(_robot(_joint("j1", "base", "l1"), _joint("j1", "l1", "l2")), tmp_path),
            "joint 'j1'", "defined twice")


def test_branching_movable_joints_name_the_candidate_tips(tmp_path):
    text = _robot(_joint("j1", "base", "l1"), _joint("left", "l1", "l2"),
                  _joint("right", "l1", "l3"), links=("base", "l1", "l2", "l3"))
    _expect(_error(text, tmp_path), "branch", "give tip_link", "'l2'", "'l3'")
    assert RobotModel.from_urdf(text, tip_link="l3").joint_names == ("j1", "right")


def test_no_movable_joint(tmp_path):
    text = _robot(_joint("j1", "base", "l1", "fixed", axis="", limit=""), links=LINKS)
    _expect(_error(text, tmp_path), "no movable joint below root link 'base'")
    _expect(_error(text, tmp_path, tip_link="l1"),
            "no movable joint between root_link 'base' and tip_link 'l1'")


def test_nearly_parallel_axes(tmp_path):
    text = _robot(_joint("j1", "base", "l1"),
                  _joint("j2", "l1", "l2", origin='<origin xyz="0.3 0 0" rpy="0 1e-6 0"/>'))
    _expect(_error(text, tmp_path), "joints 'j1' and 'j2' are almost parallel", "cannot represent")


@pytest.mark.parametrize("locked, fragment", [
    ({"nope": 0.0}, "locked joint 'nope': no such joint"),
    ({"j1": 0.0}, "locked joint 'j1': it is on the chain"),
    ({"finger": 2.0}, r"locked joint 'finger': 2 is outside its limits \[-1, 1\]"),
    ({"finger": float("nan")}, "locked joint 'finger': the position must be a finite number"),
    ({"finger": True}, "locked joint 'finger': the position must be a finite number"),
    ({"stand": 0.0}, "locked joint 'stand': it is not below root link 'l1'"),
    ({"fixed_cam": 0.0}, "locked joint 'fixed_cam': a fixed joint has no position to lock at"),
])
def test_bad_locked_joints(tmp_path, locked, fragment):
    text = _robot(_joint("stand", "base", "l1"), _joint("j1", "l1", "l2"),
                  _joint("finger", "l2", "f"),
                  _joint("fixed_cam", "l2", "cam", "fixed", axis="", limit=""),
                  links=("base", "l1", "l2", "f", "cam"))
    _expect(_error(text, tmp_path, root_link="l1", tip_link="l2", locked=locked), fragment)


def test_root_and_tip_links_are_for_urdf_only():
    with pytest.raises(RobotDescriptionError, match="root_link and tip_link apply to URDF"):
        RobotModel.from_description("puma560", tip_link="link6")


def test_unreadable_file(tmp_path):
    with pytest.raises(RobotDescriptionError, match="cannot read URDF"):
        RobotModel.from_urdf(tmp_path / "missing.urdf")
