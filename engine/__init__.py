"""docray's engine: parse, index, retrieve, synthesize (the Ray apps compose it)."""
import os

# The grpcio wheels run gRPC's fork handlers on every fork(). Ray starts its processes
# (GCS, raylet, dashboard) by fork + exec while the Milvus client's gRPC threads may be
# busy ("Other threads are currently calling into gRPC, skipping fork() handlers"), and
# the child can abort before exec: `make demo` failed 3 times in 14 here with "Failed to
# start the dashboard, return code -6" or "node timed out during startup". No docray
# process uses a gRPC channel across a fork, so the handlers are off unless set.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
