"""
The one YAML reader of the package's own files (robot descriptions, trajectories, paths).

Hand-written files get YAML 1.2's plain scalars, as doc/robot_files.md promises, and nothing
that lets a small file turn into a large or surprising document:

* numbers as in YAML 1.2 (and JSON): ``2e-4`` and ``1e3`` are floats (PyYAML follows YAML 1.1,
  where they are strings), while the YAML 1.1 forms ``1:30`` (sexagesimal, 90), ``1_000.5``,
  ``010`` (octal) and ``0b101`` are not numbers; ``yes``/``no``/``on``/``off`` are strings, not
  booleans;
* a key repeated in one mapping is an error, also within a one-line flow mapping
  (``dh: {a: 0.4, a: 9.0}``); PyYAML silently keeps the last one;
* aliases (``*name``) are refused: a kilobyte of nested aliases expands into gigabytes
  (the "billion laughs"); merge keys (``<<``) are refused with that reason;
* nesting deeper than :data:`MAX_DEPTH` levels and files larger than the caller's ``max_bytes``
  are refused before they are parsed any further; text must be UTF-8.

Every failure raises the caller's error class (``RobotDescriptionError``, ``TrajectoryError``)
with the file named.
"""
from __future__ import annotations

import re
from pathlib import Path

import yaml

MAX_DEPTH = 32                  # mappings and lists nested deeper than this are refused
_SHOWN = 200                    # characters of an offending value shown in an error

_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_INT = re.compile(r"^[-+]?[0-9]+$")
_FLOAT = re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
                    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$")


class YamlContentError(yaml.YAMLError):
    """Something the package's YAML files do not allow (see the module docstring)."""

    def __init__(self, problem: str, mark=None):
        super().__init__(problem)
        self.problem, self.mark = problem, mark

    def __str__(self) -> str:
        where = f" (line {self.mark.line + 1}, column {self.mark.column + 1})" if self.mark else ""
        return f"{self.problem}{where}"


class _Checks(yaml.constructor.SafeConstructor, yaml.resolver.Resolver):
    """The constructor's and resolver's rules of the module docstring (both parsers)."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen = {}
            for key_node, _ in node.value:
                if (key_node.tag == "tag:yaml.org,2002:merge"
                        or getattr(key_node, "value", None) == "<<"):
                    raise YamlContentError("merge keys (<<) are not supported: write the entries "
                                           "out", key_node.start_mark)
                key = self.construct_object(key_node, deep=deep)
                try:
                    first = seen.setdefault(key, key_node.start_mark)
                except TypeError:
                    continue  # unhashable key: the base class reports it
                if first is not key_node.start_mark:
                    raise YamlContentError(f"duplicate key {key!r} (first given on line "
                                           f"{first.line + 1}, column {first.column + 1})",
                                           key_node.start_mark)
        return super().construct_mapping(node, deep=deep)

    def construct_object(self, node, deep=False):
        # Explicit tags reach PyPYAML's constructors with any text (!!int 0x10 under YAML 1.2's
        # int, !!float abc, !!bool maybe, a 5,000-digit integer): their ValueError, KeyError or
        # TypeError becomes this module's error, with the line.
        try:
            return super().construct_object(node, deep=deep)
        except yaml.YAMLError:
            raise
        except (ValueError, TypeError, KeyError, OverflowError, AttributeError) as exc:
            value = getattr(node, "value", "")
            shown = value if isinstance(value, str) else ""
            shown = shown if len(shown) <= 40 else f"{shown[:30]}... ({len(shown)} characters)"
            raise YamlContentError(f"{node.tag.replace('tag:yaml.org,2002:', '!!')} {shown!r}: "
                                   f"{str(exc)[:120]}", node.start_mark) from None

    def construct_yaml_int(self, node):
        return int(self.construct_scalar(node), 10)     # YAML 1.2: '010' is ten, not eight


class _Loader(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser,
              yaml.composer.Composer, _Checks):
    """PyYAML's safe loader in Python, restricted as the module docstring says: the reference."""

    def __init__(self, stream):
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)
        yaml.composer.Composer.__init__(self)
        _Checks.__init__(self)
        yaml.resolver.Resolver.__init__(self)

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise YamlContentError(f"aliases (*{event.anchor}) are not supported",
                                   event.start_mark)
        depth = getattr(self, "_depth", 0)
        if depth >= MAX_DEPTH:
            raise YamlContentError(f"nested deeper than {MAX_DEPTH} levels",
                                   self.peek_event().start_mark)
        self._depth = depth + 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth = depth


# libyaml's parser and composer (in C, where PyYAML was built with it) under the same
# constructor and resolver: some 10x faster (a robot file: 0.1 s of a command's start in Python,
# issue 27).  Its composer cannot refuse aliases or depth as it composes, so it is used only on
# text without anchors (no '&': no alias can resolve) and with few brackets (its recursion
# stays shallow), and its result is checked for depth; for anything else, and on any error,
# the Python loader parses the text again and decides, with its messages and line numbers.
try:
    from yaml.cyaml import CParser as _CParser
except ImportError:                 # PyYAML built without libyaml
    _CParser = None
_FAST_BRACKETS = 4096


if _CParser is not None:
    class _CLoader(_CParser, _Checks):
        """libyaml's parser with the checks of :class:`_Checks` (see above)."""

        def __init__(self, stream):
            _CParser.__init__(self, stream)
            _Checks.__init__(self)
            yaml.resolver.Resolver.__init__(self)
    _LOADERS = (_Loader, _CLoader)
else:
    _CLoader, _LOADERS = None, (_Loader,)


# YAML 1.2 core schema resolvers instead of PyYAML's YAML 1.1 ones.
for _class in _LOADERS:
    _class.yaml_implicit_resolvers = {}
    for _tag, _pattern, _first in (
            ("bool", _BOOL, "tTfF"), ("null", _NULL, ["~", "n", "N", ""]),
            ("int", _INT, "-+0123456789"), ("float", _FLOAT, "-+.0123456789")):
        _class.add_implicit_resolver(f"tag:yaml.org,2002:{_tag}", _pattern, list(_first))
    _class.add_constructor("tag:yaml.org,2002:int", _Checks.construct_yaml_int)


def _depth(data, limit: int = MAX_DEPTH) -> int:
    """Return the nodes' nesting of a parsed document (scalars count one), at most ``limit``."""
    if limit <= 1 or not isinstance(data, (dict, list)):
        return 1
    items = data.values() if isinstance(data, dict) else data
    return 1 + max((_depth(x, limit - 1) for x in items), default=0)


def parse_yaml(text: str, fast: bool = True):
    """
    Return the document in ``text``.

    Raises ``yaml.YAMLError`` subclasses; see the module docstring.  ``fast``: libyaml's parser
    where it may be used (above); False: the Python loader only.
    """
    if (fast and _CLoader is not None and "&" not in text
            and text.count("[") + text.count("{") <= _FAST_BRACKETS):
        try:
            data = yaml.load(text, Loader=_CLoader)
        except Exception:  # noqa: BLE001 -- the Python loader parses it again and says why
            pass
        else:
            if _depth(data) < MAX_DEPTH:
                return data
    return yaml.load(text, Loader=_Loader)


def load_yaml_file(path: str | Path, what: str, error: type, max_bytes: int):
    """
    Read, check and parse the YAML file ``path`` holding a ``what`` (e.g. "robot description").

    Raises ``error(message)`` naming the file for every problem: unreadable, larger than
    ``max_bytes``, not UTF-8, not valid YAML or not allowed here (module docstring), or empty.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise error(f"{path}: {size} bytes is larger than a {what} file may be "
                        f"({max_bytes} bytes)")
        raw = path.read_bytes()
    except OSError as exc:
        raise error(f"{path}: cannot read {what}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not UTF-8 text (byte {exc.start}: "
                    f"{raw[exc.start:exc.start + 1]!r}); "
                    f"a {what} file must be UTF-8 YAML") from None
    try:
        data = parse_yaml(text)
    except YamlContentError as exc:
        raise error(f"{path}: not allowed in a {what} file: {exc}") from None
    except yaml.YAMLError as exc:
        raise error(f"{path}: not valid YAML: {_shorten(str(exc))}") from None
    except RecursionError:
        raise error(f"{path}: nested too deeply to be a {what}") from None
    if data is None:
        raise error(f"{path}: the file is empty (expected a {what})")
    return data


def _shorten(text: str) -> str:
    return text if len(text) <= 4 * _SHOWN else text[:4 * _SHOWN] + " ..."


# PyYAML's emitter in C (libyaml) where PyYAML was built with it: the same representation of each
# value as yaml.safe_dump, some 10x faster on a long trajectory (the pure-Python emitter took
# 0.62 s of a 2 s `robot-dynamics scale`: issue 27).
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def dump_yaml(data, **options) -> str:
    """Return ``data`` as YAML text (``yaml.safe_dump``'s options, with the C emitter if any)."""
    return yaml.dump(data, Dumper=_DUMPER, **options)
