"""How the runner starts Ray and Serve for the app: the environment a local cluster gets
(throughput-optimized Serve, direct ingress on the app's port, the short direct-ingress
hold at stop), the math threads, and the transport the Ingress's handles use."""
from __future__ import annotations

from docray.serve_apps.settings import ServeSettings


def test_ray_serve_env_follows_the_settings_unless_the_variable_is_set(monkeypatch):
    from docray.serve_apps.runner import LOOP_ENV, ray_serve_env
    from docray.serve_apps.settings import ServeSettings

    for k in ("RAY_SERVE_THROUGHPUT_OPTIMIZED", LOOP_ENV):
        monkeypatch.delenv(k, raising=False)
    assert ray_serve_env(ServeSettings()) == {"RAY_SERVE_THROUGHPUT_OPTIMIZED": "1",
                                              LOOP_ENV: "0.5"}
    off = ServeSettings(throughput_optimized=False, control_loop_interval_s=0.25)
    assert ray_serve_env(off) == {"RAY_SERVE_THROUGHPUT_OPTIMIZED": "0", LOOP_ENV: "0.25"}
    monkeypatch.setenv("RAY_SERVE_THROUGHPUT_OPTIMIZED", "1")
    monkeypatch.setenv(LOOP_ENV, "0.1")
    assert ray_serve_env(off) == {"RAY_SERVE_THROUGHPUT_OPTIMIZED": "1",
                                  LOOP_ENV: "0.1"}  # the user's win


def test_direct_ingress_takes_the_app_port_only_when_throughput_optimized(monkeypatch):
    """The Ingress replica answers on the app's port itself (no proxy hop) when docray
    starts a throughput-optimized cluster; ports the user set win; off without the mode."""
    from docray.serve_apps.runner import DIRECT_PORT_ENV, DRAIN_ENV, LOOP_ENV, ray_serve_env
    from docray.serve_apps.settings import ServeSettings

    for k in ("RAY_SERVE_THROUGHPUT_OPTIMIZED", DRAIN_ENV, *DIRECT_PORT_ENV):
        monkeypatch.delenv(k, raising=False)
    two = ServeSettings(stages={"ingress": {"autoscaling": {"max_replicas": 2}}})
    env = ray_serve_env(two, 8123)
    assert env[DIRECT_PORT_ENV[0]] == "8123" and int(env[DIRECT_PORT_ENV[1]]) >= 8125
    assert float(env[DRAIN_ENV]) < 30  # docray drains itself: no 30 s hold at stop
    monkeypatch.setenv(DRAIN_ENV, "45")
    assert ray_serve_env(two, 8123)[DRAIN_ENV] == "45"  # the user's wins
    assert set(ray_serve_env(ServeSettings(throughput_optimized=False), 8123)) == {
        "RAY_SERVE_THROUGHPUT_OPTIMIZED", LOOP_ENV}
    monkeypatch.setenv(DIRECT_PORT_ENV[0], "31000")
    assert DIRECT_PORT_ENV[0] not in ray_serve_env(two, 8123)


def test_milvus_server_and_in_process_query_run_one_math_thread(monkeypatch, tmp_path):
    import torch
    from threadpoolctl import threadpool_info, threadpool_limits

    from docray.serve_apps.milvus_server import MilvusLiteServer
    from docray.engine.retrieve.parts import single_thread_math

    monkeypatch.setenv("OMP_NUM_THREADS", "8")
    env = MilvusLiteServer(tmp_path / "m.db", 1, threads=1)._env()
    assert env["OMP_NUM_THREADS"] == env["OPENBLAS_NUM_THREADS"] == "1"
    assert MilvusLiteServer(tmp_path / "m.db", 1, threads=3)._env()["OMP_NUM_THREADS"] == "3"
    assert ServeSettings().milvus_threads == 1
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with threadpool_limits(2, user_api="blas"):  # restored on exit, whatever it sets
            single_thread_math()
            assert {i["num_threads"] for i in threadpool_info()
                    if i["user_api"] == "blas"} == {1}
            assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_handle_stages_use_the_replicas_transport(monkeypatch):
    """Handles made in the driver kept Ray actor calls although the replicas run
    throughput-optimized Serve: HandleStages asks for the transport of its own process."""
    import ray.serve._private.constants as constants

    from docray.serve_apps.ingress.stages import HandleStages

    class Handle:
        def __init__(self, by_ref=True):
            self.by_ref = by_ref

        def options(self, _by_reference):
            return Handle(_by_reference)

    for grpc in (True, False):
        monkeypatch.setattr(constants, "RAY_SERVE_USE_GRPC_BY_DEFAULT", grpc)
        stages = HandleStages(*(Handle() for _ in range(5)))
        assert {h.by_ref for h in (stages._g, stages._d, stages._p, stages._r, stages._s)} == {
            not grpc}


def test_ray_workers_read_the_control_loop_interval(ray_cluster):
    """The Serve controller is a Ray actor: it reads the interval from the environment its
    worker process inherits from the cluster docray starts (here the test session's,
    started with the same ``ray_serve_env``)."""
    from docray.serve_apps.runner import LOOP_ENV

    @ray_cluster.remote(num_cpus=0)
    def seen() -> tuple[str | None, float]:
        import os

        import ray.serve._private.constants as constants

        return os.environ.get(LOOP_ENV), constants.CONTROL_LOOP_INTERVAL_S

    want = ServeSettings().control_loop_interval_s
    assert ray_cluster.get(seen.remote()) == (f"{want:g}", want)
