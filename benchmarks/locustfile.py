"""Locust user for the docray Serve app: POST /v1/query with the benchmark questions.

Env:
  DOCRAY_BENCH_QUESTIONS  JSON list of questions, each a string or {"question", "doc"}
  DOCRAY_BENCH_KEY        API key (optional)
  DOCRAY_BENCH_WAIT       think time per user in seconds, "0" or "LOW,HIGH" (uniform)
  DOCRAY_BENCH_LOG        file that gets one "status latency_ms start_unix_s" line per
                          request, after a "start <unix_s>" line when the test starts
  DOCRAY_BENCH_STEPS      optional step load in one run, e.g. "1,2,4,8": users arrive at
                          each step and stay (a LoadTestShape); DOCRAY_BENCH_STEP_S long

A user that gets a 503 waits the Retry-After the server sent before asking again, as an
HTTP client is meant to.
"""
import json
import os
import random
import time

from locust import FastHttpUser, LoadTestShape, between, constant, events

QUESTIONS = json.loads(os.environ.get("DOCRAY_BENCH_QUESTIONS", '["What is the revenue?"]'))
KEY = os.environ.get("DOCRAY_BENCH_KEY", "")
_WAIT = [float(x) for x in os.environ.get("DOCRAY_BENCH_WAIT", "0").split(",")]


def _body(item) -> dict:
    if isinstance(item, str):
        return {"question": item, "top_k": 5}
    return {"question": item["question"], "doc": item.get("doc"), "top_k": 5}


class QueryUser(FastHttpUser):
    """geventhttpclient: a fraction of HttpUser's CPU, which here is the server's CPU too."""

    wait_time = between(*_WAIT) if len(_WAIT) == 2 else constant(_WAIT[0])

    def query(self):
        headers = {"Authorization": f"Bearer {KEY}"} if KEY else None
        with self.client.post("/v1/query", json=_body(random.choice(QUESTIONS)),
                              headers=headers, name="/v1/query", catch_response=True) as r:
            retry = None
            if r.status_code == 503:
                retry = float(r.headers.get("Retry-After") or 1)
                r.failure(f"503 retry-after={retry:g}")
            elif r.status_code != 200:
                r.failure(f"{r.status_code}")
        if retry:
            time.sleep(retry * random.uniform(0.5, 1.5))  # gevent-patched: yields

    tasks = [query]


_STEPS = [int(u) for u in os.environ.get("DOCRAY_BENCH_STEPS", "").split(",") if u]
if _STEPS:
    class StepShape(LoadTestShape):
        """Users of each step arrive within a second and stay for the next steps."""

        step_s = float(os.environ.get("DOCRAY_BENCH_STEP_S", "30"))

        def tick(self):
            i = int(self.get_run_time() // self.step_s)
            return (_STEPS[i], max(1, _STEPS[i])) if i < len(_STEPS) else None


_LOG = os.environ.get("DOCRAY_BENCH_LOG")
if _LOG:
    @events.test_start.add_listener
    def _started(**_kw):
        with open(_LOG, "a") as fh:
            fh.write(f"start {time.time():.3f}\n")

    @events.request.add_listener
    def _record(response_time=None, response=None, **_kw):
        code = getattr(response, "status_code", 0)
        with open(_LOG, "a") as fh:
            fh.write(f"{code} {response_time:.2f} {time.time() - response_time / 1000:.3f}\n")
