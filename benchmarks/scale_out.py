"""The team gateway's costs (issue 26 item 5): Redis budgets, the PostgreSQL journal, the HAProxy hop, 1 and 3 replicas.

Every target is ``mcp-guard serve --http`` over the recording upstream (``tests/state/cluster.py``:
the tools ``work`` and ``free``, 2026-07-28 requests), started once; rounds of the targets are
interleaved and the medians of the rounds compared, so machine noise hits all alike:

==================  ==================================================================================
target              what
==================  ==================================================================================
direct              one replica, clients connect to it; JSONL journal (fsync); budgets in process
direct+redis        the same with ``guard.state`` (Redis): ``work`` has a budget (never reached), ``free`` none
direct+postgres     one replica, the journal in PostgreSQL (synchronous commit)
lb x1               ``direct`` behind HAProxy (``config/haproxy.cfg``, its three entries on the one replica)
lb x3               three such replicas behind HAProxy (JSONL journals, budgets in process)
lb x3+redis+pg      three replicas behind HAProxy, Redis budgets and the PostgreSQL journal, calling ``work``
==================  ==================================================================================

Latency: ``--clients 1``-style sequential calls (``--calls`` of them per round), p50 and p99.
Throughput: 8 concurrent clients, ``--calls`` calls each, calls/s. Redis and PostgreSQL are started
for the run (``tests/real_servers.py``: free loopback ports, temporary folders).

Goals, as ratios of p50 latency in one run: a Redis-governed call (``work`` on direct+redis) ≤ 1.3× an
ungoverned one (``free`` on the same replica); the PostgreSQL journal ≤ 1.5× the JSONL journal
(direct+postgres against direct); the load balancer's hop ≤ 1.2× direct (lb x1 against direct).

Usage::

    python benchmarks/scale_out.py [--calls 150] [--rounds 3]

Runs of 2026-12-03 on the 2-core test machine, shared with other sessions' work (load about 2.5),
``--calls 200 --rounds 3`` (p50 ratios; the first run had the quieter machine)::

    Redis-governed / ungoverned         1.00   1.30     goal <= 1.3
    PostgreSQL journal / JSONL journal  1.29   1.29     goal <= 1.5
    HAProxy hop / direct                1.07   0.81     goal <= 1.2

Throughput does not grow with replicas here: the replicas, their upstreams, Redis, PostgreSQL,
HAProxy and the clients share two cores (3 replicas / direct: 0.92 calls/s; with Redis and
PostgreSQL: 0.44-0.62). The replicas' gain is availability, and capacity on more cores or hosts.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mcp_guard.state.pg_schema import init_schema  # noqa: E402
from tests.real_servers import Postgres, Redis  # noqa: E402
from tests.state.cluster import Client, Cluster, rejection_kind  # noqa: E402

BIG_BUDGET = 1_000_000


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0-1) of ``values``, nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


async def latencies(url: str, tool: str, calls: int) -> list[float]:
    """``calls`` sequential calls of ``tool`` from one client; seconds each."""
    out = []
    async with httpx.AsyncClient(timeout=60) as http:
        client = Client(http, url)
        await client.call(tool, {"n": "warm"})
        for i in range(calls):
            started = time.perf_counter()
            answer = await client.call(tool, {"n": str(i)})
            out.append(time.perf_counter() - started)
            assert "result" in answer and rejection_kind(answer) is None, answer
    return out


async def throughput(url: str, tool: str, calls: int, clients: int = 8) -> float:
    """Calls per second of ``clients`` concurrent clients making ``calls`` calls each."""

    async def one(k: int) -> None:
        async with httpx.AsyncClient(timeout=60) as http:
            client = Client(http, url)
            for i in range(calls):
                answer = await client.call(tool, {"n": f"{k}-{i}"})
                assert "result" in answer and rejection_kind(answer) is None, answer

    started = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for k in range(clients):
            tg.start_soon(one, k)
    return clients * calls / (time.perf_counter() - started)


async def main(calls: int, rounds: int) -> None:
    redis, pg = Redis(), Postgres()
    redis.start()
    pg.start()
    init_schema(pg.url)
    folder = Path(tempfile.mkdtemp(prefix="mcp-guard-bench-"))
    targets: dict[str, tuple[Cluster, str]] = {}
    clusters: list[Cluster] = []

    async def add(name: str, tool: str, **options: Any) -> None:
        sub = folder / name.replace(" ", "_").replace("+", "_")
        sub.mkdir()
        cluster = Cluster(sub, **options)
        clusters.append(cluster)
        await cluster.start()
        targets[name] = (cluster, f"rec__{tool}")

    try:
        jsonl = str(folder / "journal.jsonl")
        await add("direct", "free", replicas=1, balancer=False, journal=jsonl)
        await add(
            "direct+redis free",
            "free",
            replicas=1,
            balancer=False,
            journal=jsonl,
            redis_url=redis.url,
            budget=BIG_BUDGET,
        )
        targets["direct+redis work"] = (targets["direct+redis free"][0], "rec__work")
        await add("direct+postgres", "free", replicas=1, balancer=False, journal=pg.url)
        await add("lb x1", "free", replicas=1, journal=jsonl)
        await add("lb x3", "free", replicas=3, journal=jsonl)
        await add("lb x3+redis+pg", "work", replicas=3, journal=pg.url, redis_url=redis.url, budget=BIG_BUDGET)
        p50: dict[str, list[float]] = {n: [] for n in targets}
        p99: dict[str, list[float]] = {n: [] for n in targets}
        rate: dict[str, list[float]] = {n: [] for n in targets}
        for _ in range(rounds):
            for name, (cluster, tool) in targets.items():
                times = await latencies(cluster.url, tool, calls)
                p50[name].append(percentile(times, 0.5))
                p99[name].append(percentile(times, 0.99))
                rate[name].append(await throughput(cluster.url, tool, max(10, calls // 8)))
    finally:
        for cluster in clusters:
            await cluster.stop()
        redis.close()
        pg.close()
        shutil.rmtree(folder, ignore_errors=True)

    med = {n: statistics.median(v) for n, v in p50.items()}
    print(f"scale_out: {calls} sequential calls, 8 clients x {max(10, calls // 8)} calls per target, {rounds} rounds")
    print(f"{'target':<20} {'p50 ms':>8} {'p99 ms':>8} {'calls/s (8 clients)':>20}")
    for name in targets:
        print(
            f"{name:<20} {med[name] * 1000:8.2f} {statistics.median(p99[name]) * 1000:8.2f} "
            f"{statistics.median(rate[name]):20.0f}"
        )
    ratios = [
        ("Redis-governed / ungoverned (p50)", med["direct+redis work"] / med["direct+redis free"], 1.3),
        ("PostgreSQL journal / JSONL journal (p50)", med["direct+postgres"] / med["direct"], 1.5),
        ("HAProxy hop / direct (p50)", med["lb x1"] / med["direct"], 1.2),
    ]
    for what, ratio, goal in ratios:
        print(f"{what:<42} {ratio:5.2f}  (goal <= {goal}: {'met' if ratio <= goal else 'NOT met'})")
    x3 = statistics.median(rate["lb x3+redis+pg"])
    direct = statistics.median(rate["direct"])
    print(f"{'3 replicas / direct (calls/s)':<42} {statistics.median(rate['lb x3']) / direct:5.2f}")
    print(f"{'3 replicas+redis+pg / direct (calls/s)':<42} {x3 / direct:5.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=150, help="sequential calls per target and round")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds")
    args = parser.parse_args()
    anyio.run(main, args.calls, args.rounds)
