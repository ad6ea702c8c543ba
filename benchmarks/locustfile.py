"""Locust user for the docray Serve app: POST /v1/query with the benchmark questions.

Env: DOCRAY_BENCH_QUESTIONS (JSON list), DOCRAY_BENCH_KEY (API key, optional).
"""
import json
import os
import random

from locust import HttpUser, constant

QUESTIONS = json.loads(os.environ.get("DOCRAY_BENCH_QUESTIONS", '["What is the revenue?"]'))
KEY = os.environ.get("DOCRAY_BENCH_KEY", "")


class QueryUser(HttpUser):
    wait_time = constant(0)

    def on_start(self):
        if KEY:
            self.client.headers["Authorization"] = f"Bearer {KEY}"

    def query(self):
        body = {"question": random.choice(QUESTIONS), "top_k": 5}
        with self.client.post("/v1/query", json=body, name="/v1/query",
                              catch_response=True) as r:
            if r.status_code == 503:
                r.failure(f"503 retry-after={r.headers.get('Retry-After')}")
            elif r.status_code != 200:
                r.failure(f"{r.status_code}")

    tasks = [query]


_LOG = os.environ.get("DOCRAY_BENCH_LOG")
if _LOG:
    from locust import events

    @events.request.add_listener
    def _record(response_time=None, response=None, **_kw):
        code = getattr(response, "status_code", 0)
        with open(_LOG, "a") as fh:
            fh.write(f"{code} {response_time:.2f}\n")
