"""
robot-dynamics bag record|play|info|process|recover: rosbag2 bags without the ros2 command line.

``ros2 bag`` is not installable from the package index, so these are the package's own, on the
``rosbags`` library (``robot_dynamics_ros.bags``); the bags are ordinary rosbag2 bags.
"""
from __future__ import annotations

import sys
from pathlib import Path

from .robot_argument import HELP as ROBOT_HELP
from .robot_argument import add_chain_arguments, load_robot

HELP = "record, play, inspect, process and recover rosbag2 bags (MCAP or SQLite3)"
OUTPUT_CHOICES = ("gravity", "feedforward", "residual")


def _csv(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def add_arguments(parser):
    # (not bags.process: it imports the dynamics, which `bag info` and the others do not need)
    from ..bags.storage import DEFAULT_STORAGE, STORAGES
    from ..messages.topics import DEFAULT_NAMESPACE
    sub = parser.add_subparsers(dest="bag_command", required=True)

    record = sub.add_parser("record", help="record topics until Ctrl-C or --duration")
    record.add_argument("bag", help="output bag (a new directory)")
    record.add_argument("--topics", nargs="+", required=True, help="topics to record")
    record.add_argument("--storage", choices=sorted(STORAGES), default=DEFAULT_STORAGE)
    record.add_argument("--duration", type=float, help="stop after this many seconds")
    record.add_argument("--use-sim-time", action="store_true",
                        help="stamp messages with /clock instead of the system time")
    record.add_argument("--overwrite", action="store_true", help="replace an existing bag")

    play = sub.add_parser("play", help="publish a bag with its recorded timing")
    play.add_argument("bag", help="bag directory (or .mcap file)")
    play.add_argument("--rate", type=float, default=1.0, help="speed factor (default 1)")
    play.add_argument("--loop", action="store_true", help="play again and again until Ctrl-C")
    play.add_argument("--topics", nargs="+", help="only these topics")
    play.add_argument("--clock", type=float, nargs="?", const=100.0, metavar="HZ",
                      help="publish /clock with the bag's time at HZ (default 100) and before "
                           "every message")
    play.add_argument("--start-offset", type=float, default=0.0, metavar="S",
                      help="start S seconds into the bag")
    play.add_argument("--remap", nargs="+", default=[], metavar="FROM:=TO",
                      help="publish topic FROM on TO")
    play.add_argument("--wait-for-subscribers", type=float, default=0.0, metavar="S",
                      help="wait up to S seconds for a subscriber on every topic first")
    play.add_argument("--min-subscribers", nargs="+", default=[], metavar="TOPIC:=N",
                      help="with --wait-for-subscribers: wait for at least N matched "
                           "subscribers on TOPIC (the played name, after --remap)")

    info = sub.add_parser("info", help="topics, types, counts, duration and storage of a bag")
    info.add_argument("bag", help="bag directory (or .mcap file)")
    info.add_argument("--check", action="store_true", help="also read every message")

    process = sub.add_parser(
        "process", help="offline: what the nodes would publish for a bag, or for many in parallel",
        description="BAG OUTPUT: one bag into the new bag OUTPUT.  BAG... OUT_DIR (several bags, "
                    "a directory of bags or a quoted glob): each bag NAME into OUT_DIR/NAME, in "
                    "parallel (local processes or a Dask cluster), with a summary (also "
                    "OUT_DIR/process_summary.csv); "
                    "outputs already there are skipped (--overwrite redoes them).")
    process.add_argument("inputs", nargs="+", metavar="BAG",
                         help="bag directory or .mcap/.db3 file; several, a directory of bags or "
                              "a quoted glob make a fleet")
    process.add_argument("output", metavar="OUTPUT",
                         help="output bag (a new directory), or for a fleet the output directory")
    process.add_argument("--robot", required=True, help=ROBOT_HELP)
    add_chain_arguments(process)
    process.add_argument("--outputs", type=_csv, default=None,
                         help="comma-separated subset of gravity,feedforward,residual,observer "
                              "(default: gravity, residual, and feedforward when the bag has a "
                              "reference)")
    process.add_argument("--joint-states", default="/joint_states", help="joint states topic")
    process.add_argument("--reference", default=f"/{DEFAULT_NAMESPACE}/reference_trajectory",
                         help="reference trajectory topic (default %(default)s)")
    process.add_argument("--namespace", default=DEFAULT_NAMESPACE,
                         help="namespace of the output topics (default %(default)s)")
    process.add_argument("--mode", choices=("feedforward", "computed_torque"),
                         default="feedforward", help="inverse_dynamics_node's mode")
    process.add_argument("--kp", type=float, nargs="+", help="computed_torque position gains")
    process.add_argument("--kd", type=float, nargs="+", help="computed_torque velocity gains")
    process.add_argument("--friction-compensation", action="store_true",
                         help="gravity output with friction, as the node's parameter")
    process.add_argument("--effort-limit-policy", choices=("clamp", "warn", "off"),
                         default="clamp", help="the torque nodes' effort_limit_policy for the "
                         "gravity and feedforward outputs (default %(default)s)")
    _add_observer_arguments(process)
    process.add_argument("--storage", choices=sorted(STORAGES), default=DEFAULT_STORAGE)
    process.add_argument("--overwrite", action="store_true", help="replace an existing output")
    process.add_argument("--skip-bad", action="store_true",
                         help="skip and count messages whose bytes are damaged instead of "
                              "stopping at the first")
    process.add_argument("--no-progress", action="store_true", help="no progress bar")
    process.add_argument("--workers", type=int, metavar="N",
                         help="fleet: local worker processes (default: the machine's cores)")
    process.add_argument("--scheduler", metavar="ADDRESS",
                         help="fleet: a dask.distributed scheduler to run on, e.g. "
                              "tcp://host:8786 (its workers need this package and the paths)")

    recover = sub.add_parser("recover", help="make a readable bag of what a killed recording "
                                             "left (as ros2 bag reindex)")
    recover.add_argument("bag", help="the bag directory without metadata.yaml, the hidden "
                                     ".NAME.partial-PID directory a killed recorder left, or the "
                                     "name of the bag it was recording")
    recover.add_argument("-o", "--output", help="the recovered bag (default: NAME for a "
                                                ".NAME.partial-PID directory, else BAG_recovered)")
    recover.add_argument("--overwrite", action="store_true", help="replace an existing output")


def _add_observer_arguments(process):
    """Add the observer output's settings (external_torque_observer_node's, same defaults)."""
    from ..core.observer import EFFORT_TIMINGS, ObserverOptions
    default = ObserverOptions()
    group = process.add_argument_group("observer output (external_effort)")
    group.add_argument("--observer-gains", type=float, nargs="+", default=[default.gains],
                       help="K_O [1/s]: one, or one per joint in the robot's order "
                            "(default %(default)s)")
    group.add_argument("--effort-timing", choices=EFFORT_TIMINGS, default=default.effort_timing,
                       help="effort as a sample of the joint torque (trapezoid) or as the torque "
                            "applied since the previous state (default %(default)s)")
    group.add_argument("--static-velocity", type=float, default=default.static_velocity,
                       help="below it a joint is not known to slide [rad/s or m/s] "
                            "(default %(default)s)")
    group.add_argument("--max-interval", type=float, default=default.max_interval,
                       help="a longer gap restarts the observer [s] (default %(default)s)")
    group.add_argument("--observer-without-friction", action="store_true",
                       help="do not subtract the robot file's friction")


def _observer_options(args):
    from ..core.observer import ObserverOptions
    gains = args.observer_gains[0] if len(args.observer_gains) == 1 else \
        tuple(args.observer_gains)
    return ObserverOptions(gains, args.effort_timing, not args.observer_without_friction,
                           args.static_velocity, args.max_interval)


def run(args) -> int:
    import warnings

    from ..bags.reader import BagWarning
    commands = {"record": _record, "play": _play, "info": _info, "process": _process,
                "recover": _recover}

    def show(message, category, *_):
        print(f"robot-dynamics bag: warning: {message}", file=sys.stderr)
    with warnings.catch_warnings():
        warnings.simplefilter("always", BagWarning)
        warnings.showwarning = show
        return commands[args.bag_command](args)


def _record(args) -> int:
    from ..bags.record import record
    report = record(args.bag, args.topics, storage=args.storage, duration=args.duration,
                    overwrite=args.overwrite, use_sim_time=args.use_sim_time,
                    ready=lambda: print(f"recording to {args.bag} (Ctrl-C to stop)",
                                        flush=True))
    counts = ", ".join(f"{topic} {count}" for topic, count in report.counts.items())
    print(f"{args.bag}: {sum(report.counts.values())} messages in {report.seconds:.1f} s "
          f"({counts})" + (" (interrupted)" if report.interrupted else ""), flush=True)
    return 0


def _play(args) -> int:
    from ..bags.play import PlayOptions, parse_min_subscribers, parse_remaps, play
    options = PlayOptions(rate=args.rate, loop=args.loop,
                          topics=tuple(args.topics) if args.topics else None, clock=args.clock,
                          start_offset=args.start_offset, remap=parse_remaps(args.remap),
                          wait_for_subscribers=args.wait_for_subscribers,
                          min_subscribers=parse_min_subscribers(args.min_subscribers))
    report = play(args.bag, options,
                  ready=lambda: print(f"playing {args.bag} (Ctrl-C to stop)", flush=True))
    counts = ", ".join(f"{topic} {count}" for topic, count in report.published.items())
    print(f"played {sum(report.published.values())} messages in {report.seconds:.1f} s "
          f"({counts})" + (" (interrupted)" if report.interrupted else ""), flush=True)
    return 0


def _info(args) -> int:
    from ..bags import bag_info, format_info
    info = bag_info(args.bag, check=args.check)
    print(format_info(info))
    return 1 if info.problems else 0


def _process(args) -> int:
    from ..bags.fleet import is_collection
    if len(args.inputs) > 1 or is_collection(args.inputs[0]):
        return _process_fleet(args)
    if args.workers is not None or args.scheduler is not None:
        print("robot-dynamics bag: note: --workers and --scheduler concern fleets; one bag is "
              "processed here", file=sys.stderr)
    return _process_one(args)


def _process_options(args):
    from ..bags.process import ProcessOptions
    return ProcessOptions(
        outputs=None if args.outputs is None else tuple(args.outputs),
        joint_states_topic=args.joint_states, reference_topic=args.reference,
        namespace=args.namespace, mode=args.mode,
        kp=None if args.kp is None else tuple(args.kp),
        kd=None if args.kd is None else tuple(args.kd),
        friction_compensation=args.friction_compensation, storage=args.storage,
        overwrite=args.overwrite, progress=not args.no_progress, skip_bad=args.skip_bad,
        effort_limit_policy=args.effort_limit_policy, observer=_observer_options(args))


def _process_one(args) -> int:
    from ..bags.process import process_bag
    model = load_robot(args)
    report = process_bag(args.inputs[0], args.output, model, _process_options(args))
    rate = report.joint_states / report.seconds if report.seconds > 0 else float("inf")
    print(f"{args.output}: {report.joint_states} joint states in {report.seconds:.2f} s "
          f"({rate:,.0f} messages/s), {report.references} reference(s)")
    for topic, count in report.written.items():
        print(f"  {topic}: {count} messages")
    for topic, counts in report.limited.items():
        print(f"  {topic}: commands above the effort limit ({args.effort_limit_policy}): "
              + ", ".join(f"{joint} {count}" for joint, count in counts.items()))
    issues = {kind: count for kind, count in report.stamps.items() if count}
    if issues:
        print("  header stamps of valid joint states: " + ", ".join(
            f"{count} {kind}" for kind, count in issues.items()), file=sys.stderr)
    if report.rejected:
        print("  dropped: " + ", ".join(
            f"{reason} {count}" for reason, count in report.rejected.items()), file=sys.stderr)
    return 0


def _process_fleet(args) -> int:
    from ..bags.engine import Engine
    from ..bags.fleet import (FleetOptions, find_bags, format_summary, process_fleet,
                              write_summary)
    model = load_robot(args)
    options = _process_options(args)
    fleet = FleetOptions(args.workers, args.scheduler, progress=not args.no_progress)
    sources = find_bags(args.inputs, args.output)
    where = f"the Dask scheduler at {args.scheduler}" if args.scheduler else \
        f"{Engine(args.workers).workers} local process(es)"
    print(f"{len(sources)} bag(s) into {Path(args.output)}/ on {where}", file=sys.stderr,
          flush=True)
    finished = []
    try:
        outcomes = process_fleet(sources, args.output, model, options, fleet,
                                 on_done=finished.append)
    except KeyboardInterrupt:       # the workers are stopped, partial outputs removed
        done = [o.name for o in finished if o.status in ("done", "skipped")]
        print(f"robot-dynamics bag: interrupted; {len(done)} finished output(s) kept in "
              f"{Path(args.output)}/ ({', '.join(done) or 'none'}), no other", file=sys.stderr)
        return 130
    print(format_summary(outcomes, model.joint_names))
    paths = write_summary(outcomes, model.joint_names, args.output)
    counts = {s: sum(o.status == s for o in outcomes) for s in ("done", "skipped", "failed")}
    print(f"{counts['done']} processed, {counts['skipped']} skipped (output there before; "
          f"--overwrite redoes them), {counts['failed']} failed; summary in "
          f"{', '.join(map(str, paths))}")
    for o in outcomes:
        if o.status == "failed":
            print(f"robot-dynamics bag: {o.source}: {o.error}", file=sys.stderr)
    return 1 if counts["failed"] else 0


def _recover(args) -> int:
    from ..bags.recover import recover
    report = recover(args.bag, args.output, overwrite=args.overwrite)
    counts = ", ".join(f"{topic} {count}" for topic, count in report.counts.items())
    print(f"{report.output}: recovered {sum(report.counts.values())} messages from "
          f"{report.source} ({counts})")
    for note in report.notes:
        print(f"  {note}", file=sys.stderr)
    return 0
