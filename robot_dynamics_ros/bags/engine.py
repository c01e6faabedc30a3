"""
The engine that runs one task per bag in parallel: worker processes here, or a Dask cluster.

Usage::

    with Engine(workers=4) as engine:                          # local worker processes
    with Engine(scheduler="tcp://10.0.0.5:8786") as engine:    # a dask.distributed cluster
        results = engine.run(function, items, on_done=..., on_count=...)

``function(item, count)`` runs once per item on a worker and returns the item's outcome as data
(the fleet's tasks catch a bag's error and return it, so one bad bag fails alone); ``count(n)``
tells the caller's ``on_count(index, n)`` how much of the item is done (messages), for a progress
bar (some may come after the item's ``on_done``), and ``on_done(index, result)`` is called as
each item finishes.

* **Local** (no address): ``workers`` processes (default: the cores this process may use),
  forked from a forkserver that has imported the package once, started with the engine's first
  run and kept for its life; each runs one item at a time, sent through its pipe, and sends back
  counts and the result through it.  Processes, not threads: decoding and writing messages is
  Python code that holds the interpreter lock.  (Dask's multiprocessing scheduler did this
  before: it cost a third more CPU per message than a plain loop, and after Ctrl-C its pool
  waited for its workers forever.)  One worker, or one item, runs in this process: a plain loop.
  The engine knows which item each worker runs: a worker process that dies (killed, out of
  memory) is replaced and its item run again once, then returned as :class:`TaskFailure` for
  that item alone.  Ctrl-C (KeyboardInterrupt in this process) kills the workers at once and
  is raised again; workers ignore SIGINT themselves (a terminal sends it to the whole group).
* **Cluster** (``scheduler`` address, e.g. ``tcp://host:8786`` of ``dask scheduler``): a
  ``distributed.Client``.  A task whose worker dies is retried elsewhere by the scheduler and,
  after ``distributed.scheduler.allowed-failures`` deaths, returned as :class:`TaskFailure` for
  that item alone.  Counts travel as worker events (``log_event`` / ``subscribe_topic``, one
  topic per run).  Workers need this package (same version) and the files at the same paths.
"""
from __future__ import annotations

import collections
import multiprocessing
import os
import signal
import socket
import uuid
from typing import Callable, NamedTuple

from ..core.errors import InputError, RobotDynamicsError

CONNECT_TIMEOUT = 10.0              # s for a scheduler to answer
STOP_TIMEOUT = 1.0                  # s for a worker process to end when asked, then killed
ATTEMPTS = 2                        # runs of an item whose worker process died, in all
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


class TaskFailure(NamedTuple):
    """An item whose task did not return: its worker died, or the engine stopped."""

    reason: str


def default_workers() -> int:
    """Return the number of cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:                          # not Linux
        return os.cpu_count() or 1


class Engine:
    """Dask's local scheduler (``workers`` processes) or a cluster (``scheduler`` address)."""

    def __init__(self, workers: int | None = None, scheduler: str | None = None):
        if workers is not None and workers < 1:
            raise InputError(f"--workers: must be at least 1, got {workers}")
        self.workers = workers or default_workers()
        self.address = scheduler
        self.client = None
        self._pool = None               # local worker processes, kept for the engine's life

    def __enter__(self) -> "Engine":
        if self.address is not None:
            self.client = _connect(self.address)
        return self

    def __exit__(self, *_):
        if self.client is not None:
            self.client.close()
            self.client = None
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def run(self, function: Callable, items: list, on_done: Callable | None = None,
            on_count: Callable | None = None, preload: tuple = ()) -> list:
        """
        Return ``function(item, count)`` for every item (in item order; see the module).

        ``preload``: modules the local workers' server imports beforehand (besides
        ``function``'s), such as those ``function`` imports when first called.
        """
        on_done = on_done or (lambda index, result: None)
        on_count = on_count or (lambda index, count: None)
        if not items:
            return []
        if self.client is not None:
            return _run_cluster(self.client, function, items, on_done, on_count)
        if self.workers == 1 or len(items) == 1:
            return _run_here(function, items, on_done, on_count)
        if self._pool is None:
            self._pool = _Pool(self.workers, [function.__module__, *preload])
        try:
            return self._pool.run(function, items, on_done, on_count)
        except BaseException:
            self._pool = None                   # it killed its workers
            raise

    def map(self, function: Callable, items) -> list:
        """
        Return ``[function(item) for item in items]``, computed on the engine.

        An exception of ``function`` is raised here (the first item's that raised); a task lost
        with its worker raises RobotDynamicsError.  ``function`` must be picklable (a module's).
        """
        results = self.run(_Call(function), list(items), preload=(function.__module__,))
        for result in results:
            if isinstance(result, _Raised):
                raise result.error
            if isinstance(result, TaskFailure):
                raise RobotDynamicsError(f"the parallel engine lost a task: {result.reason}")
        return results


class _Raised(NamedTuple):
    """What a mapped function raised, returned by its task to be raised by the caller."""

    error: Exception


class _Call:
    """``function(item)`` as an engine task (``Engine.map``)."""

    def __init__(self, function: Callable):
        self.function = function

    def __call__(self, item, count):
        try:
            return self.function(item)
        except Exception as exc:  # noqa: BLE001 -- raised again by Engine.map, in the caller
            return _Raised(exc)


def _connect(address: str):
    """Return a Client of the scheduler at ``address``, or say (InputError) why there is none."""
    from distributed import Client
    from distributed.comm.addressing import get_address_host_port, parse_address
    from distributed.comm.registry import get_backend
    try:
        # checked first: a Client that never connected hangs 20 s in its __del__ (distributed)
        scheme = parse_address(address)[0]
        get_backend(scheme)
        if scheme == "tcp":
            socket.create_connection(get_address_host_port(address), CONNECT_TIMEOUT).close()
        return Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise InputError(f"--scheduler {address}: no Dask scheduler there "
                         f"({type(exc).__name__}: {exc})") from None


# -- local: a plain loop here, or worker processes of this engine ------------------------------
def _run_here(function, items, on_done, on_count) -> list:
    """Run the items one after the other in this process (one worker, or one item)."""
    results = []
    for i, item in enumerate(items):
        results.append(function(item, _LocalCount(on_count, i)))
        on_done(i, results[-1])
    return results


class _LocalCount:
    """``count(n)`` of item ``index`` run in this process."""

    def __init__(self, on_count, index: int):
        self.on_count, self.index = on_count, index

    def __call__(self, count: int):
        self.on_count(self.index, int(count))


class _PipeCount:
    """``count(n)`` of item ``index`` in a worker process: a message to the engine."""

    def __init__(self, connection, index: int):
        self.connection, self.index = connection, index

    def __call__(self, count: int):
        self.connection.send(("count", self.index, int(count)))


def _worker_main(connection):
    """
    Run the tasks the engine sends, one at a time, until it sends None or goes away.

    SIGINT is ignored: a terminal's Ctrl-C reaches the whole process group, and the engine
    stops its workers itself (a worker interrupted on its own would leave a half-done task).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            task = connection.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        function, index, item = task
        try:
            result = function(item, _PipeCount(connection, index))
        except Exception as exc:  # noqa: BLE001 -- the item's outcome, not the worker's end
            result = TaskFailure(f"{type(exc).__name__}: {exc}")
        try:
            connection.send(("done", index, result))
        except Exception as exc:  # noqa: BLE001 -- a result that does not pickle
            connection.send(("done", index, TaskFailure(f"its result was not sent back "
                                                        f"({type(exc).__name__}: {exc})")))


class _Worker:
    """A worker process, its end of the pipe and the item it runs (None: idle)."""

    def __init__(self, context):
        self.connection, child = context.Pipe()
        self.process = context.Process(target=_worker_main, args=(child,), daemon=True,
                                       name="robot-dynamics-worker")
        self.process.start()
        child.close()
        self.item = None

    def stop(self, kill: bool):
        """End the process: asked to (it finishes nothing: it is idle) or killed outright."""
        if self.process.is_alive() and not kill:
            try:
                self.connection.send(None)
            except OSError:
                pass
            self.process.join(STOP_TIMEOUT)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(STOP_TIMEOUT)
        self.connection.close()


class _Pool:
    """
    ``workers`` processes forked from the forkserver, one item at a time each.

    The engine knows which item each worker runs, so a worker that dies costs that item one
    attempt (:data:`ATTEMPTS` in all), and stopping (Ctrl-C, an error here) kills the workers
    at once instead of waiting for their items.
    """

    def __init__(self, workers: int, modules: list):
        self.size = workers
        self.context = _context(modules)
        self.workers: list = []

    def run(self, function, items, on_done, on_count) -> list:
        from multiprocessing.connection import wait
        todo = collections.deque(range(len(items)))
        attempts, results = [0] * len(items), {}
        while len(self.workers) < min(self.size, len(items)):
            self.workers.append(_Worker(self.context))
        try:
            while len(results) < len(items):
                for k, worker in enumerate(self.workers):
                    if worker.item is None and todo:
                        if not worker.process.is_alive():       # died between two items
                            worker.stop(kill=True)
                            worker = self.workers[k] = _Worker(self.context)
                        worker.item = todo.popleft()
                        attempts[worker.item] += 1
                        try:
                            worker.connection.send((function, worker.item, items[worker.item]))
                        except (BrokenPipeError, ConnectionResetError):
                            pass                        # it died: found below, as lost
                busy = [w for w in self.workers if w.item is not None]
                ready = set(wait([w.connection for w in busy]
                                 + [w.process.sentinel for w in busy]))
                for worker in busy:
                    if worker.connection in ready or worker.process.sentinel in ready:
                        self._hear(worker, results, on_done, on_count)
                    if worker.item is not None and not worker.process.is_alive():
                        self._lost(worker, attempts, todo, results, on_done)
        except BaseException:
            self.close(kill=True)               # Ctrl-C: the workers' items are abandoned
            raise
        return [results[i] for i in range(len(items))]

    @staticmethod
    def _hear(worker, results, on_done, on_count):
        """Take what ``worker`` sent: counts, and its item's result (then it is idle)."""
        try:
            while worker.item is not None and worker.connection.poll():
                kind, index, value = worker.connection.recv()
                if kind == "count":
                    on_count(index, value)
                else:
                    worker.item = None
                    results[index] = value
                    on_done(index, value)
        except (EOFError, OSError):
            pass                                # it died: _lost says what became of its item

    def _lost(self, worker, attempts, todo, results, on_done):
        """Run a dead worker's item again once, else report it alone; replace the worker."""
        index, code = worker.item, worker.process.exitcode
        worker.stop(kill=True)
        self.workers[self.workers.index(worker)] = _Worker(self.context)
        if attempts[index] < ATTEMPTS:
            todo.appendleft(index)
            return
        why = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        results[index] = TaskFailure(f"its worker process died ({why}), {attempts[index]} "
                                     "times; nothing of it is kept")
        on_done(index, results[index])

    def close(self, kill: bool = False):
        for worker in self.workers:
            worker.stop(kill)
        self.workers = []


def _context(modules: list):
    """
    Return the forkserver context, ``modules`` imported by its server.

    One clean server process imports the package once and forks every worker from it: spawn
    (dask's default) imports it again in every worker, 2-3 s each on this loaded machine; fork
    would copy this process's threads' locks.  (Python 3.11's forkserver ignores a preloaded
    ``__main__`` and the caller's sys.path: the module must be importable as installed.)  The
    server starts with one BLAS / OpenMP thread, so that N workers use N cores, not N times the
    library's threads spinning on them (what dask.distributed's nanny sets for its workers).
    """
    from multiprocessing import forkserver
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(modules)
    saved = {name: os.environ.get(name) for name in ONE_THREAD}
    os.environ.update(ONE_THREAD)
    try:
        forkserver.ensure_running()         # once per process; inherits the environment now
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name)
            else:
                os.environ[name] = value
    return context


# -- a dask.distributed cluster ---------------------------------------------------------------
class _EventCount:
    """``count(n)`` of item ``index``: an event of the worker under ``topic``."""

    def __init__(self, topic: str, index: int):
        self.topic, self.index = topic, index

    def __call__(self, count: int):
        from distributed import get_worker
        get_worker().log_event(self.topic, [self.index, int(count)])


def _run_cluster(client, function, items, on_done, on_count) -> list:
    from distributed import as_completed
    topic = f"robot_dynamics_ros.count.{uuid.uuid4().hex}"
    client.subscribe_topic(topic, lambda event: on_count(*event[1]))
    try:
        futures = client.map(function, items, [_EventCount(topic, i) for i in range(len(items))],
                             pure=False)
        index = {future.key: i for i, future in enumerate(futures)}
        results: dict = {}
        for future in as_completed(futures, loop=client.loop):
            i = index[future.key]
            if future.status == "finished":
                results[i] = future.result()
            else:                           # KilledWorker, or a task the scheduler cancelled
                exc = future.exception() if future.status == "error" else None
                why = f"{type(exc).__name__}: {exc}" if exc is not None else future.status
                results[i] = TaskFailure(f"the task did not finish on the cluster ({why})")
            on_done(i, results[i])
    finally:
        client.unsubscribe_topic(topic)
    return [results[i] for i in range(len(items))]
