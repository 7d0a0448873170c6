"""`python -m ssdlab._ray_bridge ADDRESS`: the Ray backend of `ssdlab sweep` (Ray has no Rust
client, so the sweep's driver talks to this process in JSON lines).

It connects to the cluster at ADDRESS (HOST:PORT, ray://HOST:PORT, auto, or local to start
Ray here), answers {"ready": {...}} or {"fatal": "why"}, then turns each line
{"id", "spec", "time_s", "memory"} read on stdin into a Ray task and writes
{"id", "ok", "report" | "error"} when the task ends. A task runs its spec in a worker process
of its own under the budget (`_native.run_isolated`), as a local sweep does. End of input:
wait for the tasks in flight, disconnect, exit.
"""

from __future__ import annotations

import json
import os
import queue
import socket
import sys
import threading
from typing import Any, NoReturn, Optional

CONNECT_TIMEOUT_S = 3.0

# Test hook (`ssdlab::sweep::PANIC_SEED_VAR`): a worker whose spec has this seed panics.
PANIC_SEED_VAR = "SSDLAB_TEST_PANIC_SEED"


def _say(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _fatal(why: str) -> NoReturn:
    _say({"fatal": why})
    sys.exit(1)


def _reachable(address: str) -> None:
    """Fails within seconds if nothing listens at ADDRESS (ray.init would retry for a minute)."""
    hostport = address.removeprefix("ray://")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        _fatal(f"{address}: expected HOST:PORT, ray://HOST:PORT, auto or local")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as e:
        _fatal(f"cannot reach the Ray cluster at {address}: {e.strerror or e}")


def run_spec(spec: str, python: str, time_s: Optional[float], memory: Optional[int]) -> tuple[bool, str]:
    """A Ray task: one run in a worker process on the node that runs the task."""
    from ssdlab import _native

    ok, text = _native.run_isolated(spec, python, time_s, memory)
    return bool(ok), str(text)


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"


def main() -> None:
    address = sys.argv[1] if len(sys.argv) > 1 else "local"
    try:
        import ray
    except ImportError:
        _fatal(f"Ray is not installed in {sys.executable}: pip install 'ssdlab[ray]'")
    if address not in ("auto", "local"):
        _reachable(address)
    try:
        kwargs: dict[str, Any] = {"logging_level": "ERROR", "log_to_driver": False}
        if address == "local":
            ray.init(include_dashboard=False, **kwargs)
        else:
            ray.init(address=address, **kwargs)
    except Exception as e:  # any failure to connect is this sweep's one error
        _fatal(f"cannot connect to Ray at {address}: {_first_line(e)}")
    cpus = ray.cluster_resources().get("CPU", 1.0)
    _say({"ready": {"cpus": cpus, "nodes": len(ray.nodes()), "address": address}})

    options: dict[str, Any] = {"num_cpus": 1, "max_retries": 0}
    hook = os.environ.get(PANIC_SEED_VAR)
    if hook is not None:  # the failure-isolation tests' hook reaches the cluster's workers too
        options["runtime_env"] = {"env_vars": {PANIC_SEED_VAR: hook}}
    task = ray.remote(**options)(run_spec)
    lines: queue.Queue[Optional[str]] = queue.Queue()

    def read() -> None:
        for line in sys.stdin:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    pending: dict[Any, int] = {}
    open_input = True
    while open_input or pending:
        while True:
            try:
                line = lines.get(timeout=0.05 if not pending else 0.0)
            except queue.Empty:
                break
            if line is None:
                open_input = False
                break
            msg = json.loads(line)
            ref = task.remote(msg["spec"], sys.executable, msg.get("time_s"), msg.get("memory"))
            pending[ref] = msg["id"]
        if not pending:
            continue
        done, _ = ray.wait(list(pending), num_returns=1, timeout=0.2)
        for ref in done:
            run = pending.pop(ref)
            try:
                ok, text = ray.get(ref)
            except Exception as e:  # the task or its node died: this run failed
                ok, text = False, f"ray task failed: {_first_line(e)}"
            _say({"id": run, "ok": ok, ("report" if ok else "error"): text})
    ray.shutdown()


if __name__ == "__main__":
    main()
