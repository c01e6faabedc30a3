"""
Bad URDFs: one test per error; and one per quirk of real files that is tolerated.

Each error is a RobotDescriptionError naming the file, the link or joint and what is wrong
(nothing is built from a bad file); each tolerated quirk loads (with one warning where doc/urdf.md
says so) and gives the model it would give without the quirk.
"""
import re
import warnings

import numpy as np
import pytest

from robot_dynamics_ros.core import RobotDescriptionError, RobotModel, tool_pose
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
    _expect(_error(GOOD.replace("\n", "\n" + laughs, 1), tmp_path), "line 2", "<!ENTITY a>",
            "DOCTYPE", "not allowed")


def test_external_entity_refused(tmp_path):
    external = '<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n'
    text = GOOD.replace("\n", "\n" + external, 1).replace('name="arm"', 'name="&x;"')
    _expect(_error(text, tmp_path), "<!ENTITY x>", "not allowed")


def test_plain_doctype_accepted():
    """Accept a document type declaration, as urdfdom (robot_state_publisher's reader) does."""
    text = GOOD.replace("\n", "\n<!DOCTYPE robot>\n", 1)
    assert RobotModel.from_urdf(text).joint_names == ("j1", "j2")


def test_file_too_large(tmp_path, monkeypatch):
    monkeypatch.setattr(urdf_xml, "MAX_URDF_BYTES", 200)
    _expect(_error(GOOD, tmp_path), "larger than a URDF may be")


def test_not_utf8(tmp_path):
    path = tmp_path / "arm.urdf"
    path.write_bytes(GOOD.encode("utf-16"))
    with pytest.raises(RobotDescriptionError, match="not UTF-8"):
        RobotModel.from_urdf(path)


XACRO = GOOD.replace('<robot name="arm">',
                     '<robot name="arm" xmlns:xacro="http://www.ros.org/wiki/xacro">'
                     '<xacro:property name="l" value="0.1"/>')
XACRO = XACRO.replace('xyz="0 0 0.1"', 'xyz="0 0 ${l}"', 1)


def test_unexpanded_xacro_refused_where_it_may_not_run():
    """Text from the ROS graph: xacro elements and ${...} attributes are unexpanded, refused."""
    with pytest.raises(RobotDescriptionError, match=r"<xacro:property>: unexpanded xacro"):
        RobotModel.from_urdf(XACRO, expand_xacro=False)
    plain = GOOD.replace('xyz="0 0 0.1"', 'xyz="0 0 ${l}"', 1)
    with pytest.raises(RobotDescriptionError, match=r"<origin xyz>: unexpanded xacro expression"):
        RobotModel.from_urdf(plain, expand_xacro=False)
    with pytest.raises(RobotDescriptionError, match=r"line 2: unexpanded xacro"):   # no xmlns
        RobotModel.from_urdf(GOOD.replace("<link", "<xacro:foo/><link", 1), expand_xacro=False)


def test_xacro_expanded_where_the_user_gives_it(tmp_path):
    """A xacro file (even named .urdf) or text given by the user is expanded with xacro."""
    expected = RobotModel.from_urdf(GOOD)
    for source in (XACRO, tmp_path / "arm.urdf", tmp_path / "arm.urdf.xacro"):
        if not isinstance(source, str):
            source.write_text(XACRO)
        model = RobotModel.from_urdf(source)
        assert model.joint_names == expected.joint_names
        assert model.to_dict()["joints"] == expected.to_dict()["joints"]
    arg = XACRO.replace('value="0.1"', 'value="$(arg l)"')
    assert RobotModel.from_urdf(arg, xacro_arguments={"l": "0.1"}).n == 2
    with pytest.raises(RobotDescriptionError, match=r"URDF text>: xacro: .*argument l"):
        RobotModel.from_urdf(arg)
    with pytest.raises(RobotDescriptionError, match="not a xacro description"):
        RobotModel.from_urdf(GOOD, xacro_arguments={"l": "1"})


def test_namespace_declarations_and_ignored_elements():
    """xmlns:xacro left by old xacro, gazebo & co., comments with ${...}: the plain model."""
    decorated = GOOD.replace(
        '<robot name="arm">',
        '<robot name="arm" xmlns:xacro="http://www.ros.org/wiki/xacro" '
        'xmlns:gazebo="http://playerstage.sourceforge.net/gazebo/xmlschema/#gz">'
        '<!-- ${not expanded} $(find pkg) --><gazebo reference="l1"><mu1>0.2</mu1></gazebo>'
        '<transmission name="t"><type>SimpleTransmission</type></transmission>'
        '<ros2_control name="r" type="system"><hardware><plugin>x</plugin></hardware>'
        '</ros2_control><unknown_tag a="${x}b"/>'.replace('a="${x}b"', 'a="b"')).replace(
        '<link name="l1">', '<link name="l1"><visual><geometry><mesh filename='
        '"package://nowhere/meshes/l1.dae"/></geometry></visual>')
    assert RobotModel.from_urdf(decorated).to_dict() == RobotModel.from_urdf(GOOD).to_dict()
    default_ns = GOOD.replace('<robot name="arm">', '<robot name="arm" xmlns="http://x/urdf">')
    assert RobotModel.from_urdf(default_ns).to_dict() == RobotModel.from_urdf(GOOD).to_dict()


def test_number_forms_and_axes_as_vendors_write_them():
    odd = GOOD.replace('xyz="0 0 0.1"', 'xyz="0   0\t1.0E-1"').replace(
        'ixx="0.01"', 'ixx="1.0E-2"').replace('<axis xyz="0 0 1"/>', '<axis xyz="0 0 2E0"/>', 1)
    assert RobotModel.from_urdf(odd).to_dict() == RobotModel.from_urdf(GOOD).to_dict()
    flipped = RobotModel.from_urdf(GOOD.replace('<axis xyz="0 0 1"/>', '<axis xyz="0 0 -1"/>', 1))
    assert flipped.n == 2
    huge = GOOD.replace('<axis xyz="0 0 1"/>', '<axis xyz="1e300 1e300 0"/>', 1)
    assert RobotModel.from_urdf(huge).n == 2           # normalised without overflow (no NaN)


def test_huge_origin_refused_naming_the_joint(tmp_path):
    _expect(_error(GOOD.replace('xyz="0 0 0.1"', 'xyz="0 1e300 0.1"', 1), tmp_path),
            "joint 'j1' <origin xyz>", "out of range")


def test_byte_order_mark_text_is_not_a_path():
    assert RobotModel.from_urdf("\ufeff" + GOOD).n == 2
    assert RobotModel.from_description("\ufeff" + GOOD).n == 2
    assert RobotModel.from_urdf(("\ufeff" + GOOD).encode()).n == 2


def test_long_text_that_is_no_path_is_not_echoed():
    junk = "x" * 1_000_000
    for load in (RobotModel.from_urdf, RobotModel.from_description):
        with pytest.raises(RobotDescriptionError) as info:
            load(junk)
        assert len(str(info.value)) < 400


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


@pytest.mark.parametrize("jtype, limit, unknown", [
    ("revolute", "", ("position", "velocity", "effort")),
    ("prismatic", "", ("position", "velocity", "effort")),
    ("continuous", "", ("velocity", "effort")),
    ("revolute", '<limit lower="-1" upper="1" velocity="1"/>', ("effort",)),
    ("revolute", '<limit lower="0" upper="0" velocity="0" effort="0"/>',
     ("position", "velocity", "effort")),
    ("revolute", '<limit lower="-inf" upper="inf" velocity="nan" effort="10"/>',
     ("position", "velocity")),
])
def test_unknown_limits_load(jtype, limit, unknown):
    """Absent, 0 or non-finite limits (CAD exporters' "not specified"): unknown, not an error."""
    model = RobotModel.from_urdf(_robot(_joint("j1", "base", "l1", jtype, limit=limit),
                                        links=LINKS))
    assert model.unknown_limits == {"j1": unknown}
    assert (model.lower[0], model.upper[0]) == (-float("inf"), float("inf")) or \
        "position" not in unknown
    with pytest.raises(RobotDescriptionError, match="joint 'j1': its (velocity|effort) limit is "
                                                    "unknown.*time scaling needs it"):
        from robot_dynamics_ros.core.trajectories.limits import Limits
        Limits.from_model(model)


def test_negative_effort_refused(tmp_path):
    text = _robot(_joint("j1", "base", "l1", limit=LIMIT.replace('"10"', '"-1"')), links=LINKS)
    _expect(_error(text, tmp_path), "joint 'j1' <limit effort>", "must be >= 0")


def test_lower_limit_above_upper(tmp_path):
    limit = '<limit lower="1" upper="-1" velocity="1" effort="1"/>'
    text = _robot(_joint("j1", "base", "l1", limit=limit), links=LINKS)
    _expect(_error(text, tmp_path), "joint 'j1'", r"lower \(1\) is above upper \(-1\)")


BAD_VALUES = [     # (text of GOOD, its replacement, what the error names)
    *(pytest.param('xyz="0 0 0.1"', f'xyz="0 {value} 0.1"',
                   ("joint 'j1' <origin xyz>", "must be finite"), id=f"non-finite-{value}")
      for value in ("nan", "NaN", "inf", "-Infinity")),
    pytest.param('<axis xyz="0 0 1"/>', '<axis xyz="0 0 1e999"/>',
                 ("joint 'j1' <axis xyz>", "must be finite"), id="beyond-the-float-range"),
    pytest.param('value="1.0"', 'value="one"',
                 ("link 'base'", "<mass value>", "'one' is not a number"), id="not-a-number"),
    pytest.param('rpy="0 0 0"', 'rpy="0 0"', ("joint 'j1' <origin rpy>", "expected 3 numbers"),
                 id="wrong-count-of-numbers"),
    pytest.param('value="1.0"', 'value="1e9"',
                 ("link 'base'", "out of range: at most 1e\\+06 kg"), id="out-of-bounds"),
    pytest.param('value="1.0"', 'value="-2"', ("link 'base'", "<mass value>: must be >= 0"),
                 id="negative-mass"),
    pytest.param(' ixy="0"', "", ("link 'base'", "<inertia ixy>: missing"),
                 id="missing-inertia-attribute"),
]


@pytest.mark.parametrize("old, new, fragments", BAD_VALUES)
def test_a_bad_value_is_refused_naming_its_element(tmp_path, old, new, fragments):
    _expect(_error(GOOD.replace(old, new, 1), tmp_path), *fragments)


def test_inconsistent_inertia_warns_and_strict_refuses(tmp_path):
    bad = INERTIAL.replace('izz="0.01"', 'izz="0.05"')         # 0.01 + 0.01 < 0.05
    text = _robot(_joint("j1", "base", "l1"), _joint("j2", "l1", "l2")).replace(INERTIAL, bad)
    _expect(_error(text, tmp_path, strict_inertia=True), "link 'l1'",
            "physically inconsistent inertia", r"short by 0\.03 kg m\^2, 60 % of I3", "strict")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = RobotModel.from_urdf(text)
        assert model.with_payload(1.0).n == 2         # said once, not again for the copy
    said = [str(w.message) for w in caught]
    assert len(said) == 2 and "link 'l1'" in said[0] and "link 'l2'" in said[1], said


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


def test_nearly_parallel_axes():
    """
    A rounded pi: loaded without a warning, the frames within the robot (axes_to_dh.py).

    Kept at the joint origin, frame 1 gives joint 2 a general offset: exactly the URDF's, where
    the plain modified-DH frame would be 0.3 / 1e-6 = 300 km away (its mass matrix then had
    4 digits, and was refused).
    """
    for tilt in ("1e-5", "1e-6", "1e-9"):
        origin = f'<origin xyz="0.3 0.2 0" rpy="0 {tilt} 0"/>'
        text = _robot(_joint("j1", "base", "l1"), _joint("j2", "l1", "l2", origin=origin))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            model = RobotModel.from_urdf(text)
        angle = float(tilt)
        assert model.dh_e[0] == 0.0 and model.dh_e[1] != 0.0
        # alpha_1 is the tilt, a_1 the axes' distance; every offset of the robot's size
        assert abs(model.dh_alpha[1] - angle) <= 1e-15 * angle
        assert abs(model.dh_a[1] - 0.2) < 1e-15 and np.abs(model.chain.p_prev).max() < 0.5
        expected = np.eye(4)
        expected[:3, :3] = [[np.cos(angle), 0, np.sin(angle)], [0, 1, 0],
                            [-np.sin(angle), 0, np.cos(angle)]]
        expected[:3, 3] = [0.3, 0.2, 0.1]
        assert np.abs(tool_pose(model, [0.0, 0.0]) - expected).max() < 1e-15


def test_mimic_of_an_unknown_joint_itself_or_a_cycle(tmp_path):
    fingers = (_joint("j1", "base", "l1"), _joint("f1", "l1", "l2", extra='<mimic joint="{}"/>'),
               _joint("f2", "l1", "l3", extra='<mimic joint="{}"/>'))
    links = ("base", "l1", "l2", "l3")

    def robot(a, b):
        return _robot(fingers[0], fingers[1].format(a), fingers[2].format(b), links=links)
    _expect(_error(robot("nowhere", "j1"), tmp_path, tip_link="l1"),
            "joint 'f1': <mimic joint='nowhere'>: no such joint")
    _expect(_error(robot("j1", "f2"), tmp_path, tip_link="l1"),
            "joint 'f2': <mimic joint='f2'>: a joint cannot mimic itself")
    _expect(_error(robot("f2", "f1"), tmp_path, tip_link="l1"),
            "joints f1 -> f2 -> f1 mimic each other in a cycle")


def test_long_mimic_chain_off_the_chain():
    """1,100 joints each mimicking the next: followed in a loop (no RecursionError)."""
    n = 1100
    joints = [_joint("j1", "base", "l1")] + [
        _joint(f"m{k}", "l1", f"f{k}", extra=f'<mimic joint="m{k + 1}" offset="0.001"/>'
               if k + 1 < n else "") for k in range(n)]
    text = _robot(*joints, links=("base", "l1") + tuple(f"f{k}" for k in range(n)))
    model = RobotModel.from_urdf(text, tip_link="l1", locked={f"m{n - 1}": 0.5})
    assert model.n == 1


def test_chain_length_bound(tmp_path):
    n = 101
    joints = [_joint(f"j{k}", f"l{k}", f"l{k + 1}") for k in range(n)]
    text = _robot(*joints, links=tuple(f"l{k}" for k in range(n + 1)))
    _expect(_error(text, tmp_path), "101 movable joints: a model may have at most 100")


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
