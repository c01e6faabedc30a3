"""
The engine that runs one task per bag in parallel: Dask, locally or on a dask.distributed cluster.

Usage::

    with Engine(workers=4) as engine:                          # dask's local scheduler
    with Engine(scheduler="tcp://10.0.0.5:8786") as engine:    # a dask.distributed cluster
        results = engine.run(function, items, on_done=..., on_count=...)

``function(item, count)`` runs once per item on a worker and returns the item's outcome as data
(the fleet's tasks catch a bag's error and return it, so one bad bag fails alone); ``count(n)``
tells the caller's ``on_count(index, n)`` how much of the item is done (messages), for a progress
bar (some may come after the item's ``on_done``), and ``on_done(index, result)`` is called as
each item finishes.

* **Local** (no address): dask's multiprocessing scheduler with ``workers`` processes (default:
  the cores this process may use).  Processes, not threads: decoding and writing messages is
  Python code that holds the interpreter lock; started from a forkserver that has imported the
  package once.  One worker, or one item, runs in this process (dask's synchronous scheduler),
  which is a plain loop.  Counts travel through a multiprocessing queue given to each worker
  process when it starts.  A worker process that dies (killed, out of memory) ends the
  pool: what finished is kept and the rest is returned as :class:`TaskFailure`.
* **Cluster** (``scheduler`` address, e.g. ``tcp://host:8786`` of ``dask scheduler``): a
  ``distributed.Client``.  A task whose worker dies is retried elsewhere by the scheduler and,
  after ``distributed.scheduler.allowed-failures`` deaths, returned as :class:`TaskFailure` for
  that item alone.  Counts travel as worker events (``log_event`` / ``subscribe_topic``, one
  topic per run).  Workers need this package (same version) and the files at the same paths.
"""
from __future__ import annotations

import multiprocessing
import os
import queue
import socket
import threading
import uuid
from concurrent.futures import ProcessPoolExecutor
from typing import Callable, NamedTuple

from ..core.errors import InputError, RobotDynamicsError

CONNECT_TIMEOUT = 10.0              # s for a scheduler to answer
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
        self._channel = None            # their queue of counts

    def __enter__(self) -> "Engine":
        if self.address is not None:
            self.client = _connect(self.address)
        return self

    def __exit__(self, *_):
        if self.client is not None:
            self.client.close()
            self.client = None
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def _local_pool(self, modules: list):
        """Return the local worker processes (started on first use; ``modules`` preloaded)."""
        if self._pool is None:
            context = _context(modules)
            self._channel = context.Queue()
            self._pool = ProcessPoolExecutor(self.workers, mp_context=context,
                                             initializer=_set_channel,
                                             initargs=(self._channel,))
        return self._pool, self._channel

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
            return _run_local(None, queue.Queue(), function, items, on_done, on_count)
        pool, channel = self._local_pool([function.__module__, *preload])
        try:
            return _run_local(pool, channel, function, items, on_done, on_count)
        finally:
            if self._pool is not None and getattr(pool, "_broken", False):
                self._pool.shutdown(wait=False, cancel_futures=True)
                self._pool = None       # a dead worker broke it: a new one next time

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


# -- local: dask's synchronous or multiprocessing scheduler -----------------------------------
_WORKER_CHANNEL = None              # in a local worker process: the queue of counts


def _set_channel(channel):
    """Keep the queue of counts in a new worker process (the pool's initializer)."""
    global _WORKER_CHANNEL
    _WORKER_CHANNEL = channel


class _QueueCount:
    """``count(n)`` of item ``index`` of run ``run``, put on ``channel`` or the worker's queue."""

    def __init__(self, run: str, index: int, channel=None):
        self.run, self.index, self.channel = run, index, channel

    def __call__(self, count: int):
        (self.channel or _WORKER_CHANNEL).put((self.run, self.index, int(count)))


def _run_local(pool, channel, function, items, on_done, on_count) -> list:
    """Run the items on ``pool`` (None: here, dask's synchronous scheduler), in item order."""
    import dask
    from dask.callbacks import Callback
    options = {"scheduler": "sync"} if pool is None else \
        {"scheduler": "processes", "pool": pool, "chunksize": 1}      # one bag at a time each
    own = channel if pool is None else None         # workers: the channel they were given
    run = uuid.uuid4().hex                          # the pool's channel outlives a run
    tasks = [dask.delayed(function, pure=False)(item, _QueueCount(run, i, own))
             for i, item in enumerate(items)]
    index = {task.key: i for i, task in enumerate(tasks)}
    results: dict = {}
    drain = _Drain(channel, run, on_count)

    def posttask(key, result, *_):
        if key in index:
            results[index[key]] = result
            on_done(index[key], result)
    try:
        with Callback(posttask=posttask):
            dask.compute(*tasks, **options)
    except Exception as exc:  # noqa: BLE001 -- a dead worker process breaks the whole pool
        failure = TaskFailure(f"the local engine stopped ({type(exc).__name__}: {exc})")
        for i in range(len(items)):
            if i not in results:
                results[i] = failure
                on_done(i, failure)
    finally:
        drain.stop()
    return [results[i] for i in range(len(items))]


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


class _Drain:
    """
    A thread that hands the counts on a queue to ``on_count`` while the tasks run.

    Counts may come after their item's ``on_done`` (the caller ignores those, as for a cluster).
    """

    def __init__(self, channel, run: str, on_count):
        self.channel, self.run, self.on_count = channel, run, on_count
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="fleet-counts", daemon=True)
        self.thread.start()

    def _loop(self):
        while not self.stopping.is_set():
            try:
                run, index, count = self.channel.get(timeout=0.1)
            except queue.Empty:
                continue
            except (EOFError, OSError, ValueError):     # the queue was closed
                return
            if run == self.run:                         # not a late count of an earlier run
                self.on_count(index, count)

    def stop(self):
        self.stopping.set()
        self.thread.join()


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
