"""schemathesis against `/openapi.json` of a running `docray serve`: every route, with a
key and without. No 5xx, and every response matches the status codes, content types and
schemas the OpenAPI document declares."""
from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from docray.serve_apps.milvus_server import free_port
from serving import Server, serve_configs

pytestmark = pytest.mark.slow
KEY = {"X-API-Key": "fuzz-key"}
# Schema-valid but meaningless requests (a `doc` the workspace lacks: 404; chat messages
# with no user turn: 400) are refused by rules no schema states; every other check runs,
# negative data rejection (schema-invalid input must get 4xx) included.
SEMANTIC = [schemathesis.checks.positive_data_acceptance]
# The long run: API_FUZZ_EXAMPLES=60 API_FUZZ_SUMMARY=benchmarks/results/api_fuzz.json
EXAMPLES = int(os.environ.get("API_FUZZ_EXAMPLES", "12"))
SUMMARY: dict[str, dict] = {}
RUN = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
               suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def server(sample_data, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("api_fuzz")
    data = tmp / "data"
    shutil.copytree(sample_data, data)
    cfg, serve_cfg, _ = serve_configs(tmp, data, api_keys={"fuzz-key": "default"},
                                      max_upload_mb=1)
    srv = Server(cfg, serve_cfg, free_port(), tmp / "serve.log")
    srv.wait_ready()
    yield srv
    srv.kill()


@pytest.fixture(scope="module")
def api(server):
    return schemathesis.openapi.from_url(f"{server.url}/openapi.json")


def _fuzz(api, check) -> dict[str, int]:
    """Run ``check`` over hypothesis-generated cases of every operation; cases per route.
    (schemathesis' pytest ``from_fixture`` does not run under this pytest, so the
    operations' strategies are driven here.)"""
    from hypothesis import given

    tried: dict[str, int] = {}
    statuses: dict[str, Counter] = {}
    for result in api.get_all_operations():
        op = result.ok()
        label = f"{op.method.upper()} {op.path}"

        @RUN
        @given(case=op.as_strategy())
        def run(case):
            tried[label] = tried.get(label, 0) + 1
            statuses.setdefault(label, Counter())[check(case, label)] += 1
        run()
    return tried, statuses


def _record(name: str, tried: dict, statuses: dict) -> None:
    SUMMARY[name] = {"cases": sum(tried.values()), "examples_per_route": EXAMPLES,
                     "routes": {k: {"cases": tried[k], "status": dict(sorted(
                         (str(c), n) for c, n in statuses[k].items()))} for k in sorted(tried)}}
    out = os.environ.get("API_FUZZ_SUMMARY")
    if out:
        Path(out).write_text(json.dumps(SUMMARY, indent=1))


def test_every_route_with_a_key_conforms_and_never_5xx(api):
    def check(case, label):
        # 503/504 are the documented overload and timeout answers, not defects
        response = case.call(headers=KEY, timeout=120)
        assert response.status_code < 500 or response.status_code in (503, 504), \
            (label, response.status_code, response.text[:500])
        case.validate_response(response, excluded_checks=SEMANTIC)
        return response.status_code

    tried, statuses = _fuzz(api, check)
    _record("with_key", tried, statuses)
    assert {"POST /v1/query", "POST /v1/documents", "GET /v1/jobs/{job_id}"} <= set(tried)
    assert sum(tried.values()) >= 5 * len(tried), tried
    assert any(200 in statuses[k] for k in statuses), statuses  # not only refusals


def test_every_route_without_a_key_is_refused_in_its_schema(api):
    def check(case, label):
        response = case.call(timeout=60)
        no_route = response.status_code == 404 and response.json()["error"] == "Not Found"
        if case.path.startswith("/v1/") and not no_route:  # a path no route matches: 404
            assert response.status_code in (401, 422), \
                (label, response.status_code, response.text[:300])
        assert response.status_code < 500, (label, response.text[:300])
        case.validate_response(response, excluded_checks=SEMANTIC)
        return response.status_code

    tried, statuses = _fuzz(api, check)
    _record("without_key", tried, statuses)
    assert "POST /v1/query" in tried and 401 in statuses["POST /v1/query"]
