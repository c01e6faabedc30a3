"""dask.distributed clusters for the tests: in this process or worker processes, loopback only."""
import contextlib


@contextlib.contextmanager
def loopback_cluster(processes=False, n_workers=2):
    """
    Yield a LocalCluster whose every listening socket is on 127.0.0.1 and that has no dashboard.

    ``processes=False``: workers are threads of this process and talk in memory (inproc); their
    and the scheduler's HTTP servers (health, metrics) would otherwise listen on every interface.
    """
    from distributed import LocalCluster
    with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=processes,
                      host=None if not processes else "127.0.0.1", dashboard_address=None,
                      worker_dashboard_address="127.0.0.1:0",
                      scheduler_kwargs={"dashboard_address": "127.0.0.1:0"}) as cluster:
        yield cluster
