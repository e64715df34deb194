"""A flood of page requests on ``echomq-viz app``: the cap holds, the class goes on.

    python benchmarks/flood.py [--gets 150] [--concurrency 10] [--cap 20] [--json OUT]

The app runs with ``--max-kernels CAP``. A few students join notebook 01 and
drag its sliders (the classroom benchmark's students: real pages, real
websockets); meanwhile one client asks for ``/voila/render/01-…`` GETS times,
CONCURRENCY at a time, and never connects a websocket, as a script or a
careless link would. Every half second the app's kernels and the resident
memory of the app and everything under it are sampled. After the flood it
waits until the kernels of the pages that never connected are gone.

Reported (part ``app_flood`` of ``benchmarks/run.py``):

- ``app_flood_kernels_max``: most kernels at once (goal: at most the cap);
- ``app_flood_rss_mb_max``: most resident memory of the app's processes, summed
  (shared pages counted in each: an upper bound), against
  ``app_flood_budget_mb``, the app before the flood plus the cap's kernels at
  ``KERNEL_MB`` each;
- ``app_flood_refused``: pages answered "the class is full" (a 503 with that
  line); ``app_flood_unclear``: any other answer than a page or that line (goal 0);
- ``app_flood_student_errors``: what the students already in saw go wrong (goal 0);
- ``app_flood_seat_free_s``: from the flood's end until every seat a page that
  never connected held is free again.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "benchmarks"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import psutil  # noqa: E402
from tornado.httpclient import AsyncHTTPClient  # noqa: E402

from classroom import NOTEBOOK, App, Record, Student, _join_all  # noqa: E402
from echomq_viz.launcher.seats import KERNEL_MB  # noqa: E402

GOALS = {"app_flood_kernels_over_cap": ("<=", 0), "app_flood_rss_over_budget_mb": ("<=", 0),
         "app_flood_unclear": ("<=", 0), "app_flood_student_errors": ("<=", 0), "app_flood_seat_free_s": ("<=", 60)}
FULL_LINE = "The class is full: "


def _kernels_and_rss(app: App) -> tuple[int, float]:
    kernels, rss = 0, 0
    for proc in app.family(with_app=True):
        try:
            kernels += "echomq_viz.launcher._app_kernel" in " ".join(proc.cmdline())
            rss += proc.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return kernels, rss / 2**20


async def run_flood(app: App, gets: int, concurrency: int, cap: int, students_in: int, log=print) -> dict:
    record = Record()
    samples: list[tuple[int, float]] = []
    baseline_mb = _kernels_and_rss(app)[1]  # the app, its server and Redis, no kernel yet
    students = await _join_all([Student(number, app.base_url, record) for number in range(students_in)], record)
    log(f"{len(students)} of {students_in} students in; flooding with {gets} GETs, {concurrency} at a time")
    until = asyncio.Event()
    drags = [asyncio.ensure_future(student.drag(until)) for student in students]
    sampling = asyncio.Event()

    async def sample() -> None:
        while not sampling.is_set():
            samples.append(_kernels_and_rss(app))
            await asyncio.sleep(0.5)

    sampler = asyncio.ensure_future(sample())
    answers: dict[str, int] = {"page": 0, "refused": 0, "unclear": 0}
    gate = asyncio.Semaphore(concurrency)
    client = AsyncHTTPClient(max_clients=concurrency)

    async def get() -> None:
        async with gate:
            try:
                reply = await client.fetch(f"{app.base_url}/voila/render/{NOTEBOOK}", request_timeout=300,
                                           raise_error=False)
                body = (reply.body or b"").decode(errors="replace")
            except Exception as exc:  # a connection the server dropped: not a clear page
                log(f"flood GET: {type(exc).__name__}: {exc}")
                answers["unclear"] += 1
                return
            if reply.code == 200 and '"kernelId"' in body:
                answers["page"] += 1
            elif reply.code == 503 and FULL_LINE in body and "try again in a minute" in body:
                answers["refused"] += 1
            else:
                answers["unclear"] += 1
                log(f"flood GET: HTTP {reply.code}, {len(body)} bytes")

    started = time.monotonic()
    await asyncio.gather(*(get() for _ in range(gets)))
    flood_s = time.monotonic() - started
    log(f"flood done in {flood_s:.1f} s: {answers}")
    until.set()
    await asyncio.gather(*drags)
    ended = time.monotonic()
    while _kernels_and_rss(app)[0] > len(students) and time.monotonic() - ended < 300:
        await asyncio.sleep(1)
    seat_free_s = time.monotonic() - ended
    sampling.set()
    await sampler
    for student in students:
        await student.leave()
    kernels_max = max(kernels for kernels, _ in samples)
    rss_max = max(rss for _, rss in samples)
    budget = baseline_mb + cap * KERNEL_MB
    return {
        "app_flood_gets": gets, "app_flood_concurrency": concurrency, "app_flood_cap": cap,
        "app_flood_kernels_max": kernels_max, "app_flood_kernels_over_cap": max(0, kernels_max - cap),
        "app_flood_rss_mb_max": round(rss_max), "app_flood_budget_mb": round(budget),
        "app_flood_rss_over_budget_mb": max(0, round(rss_max - budget)),
        "app_flood_pages": answers["page"], "app_flood_refused": answers["refused"],
        "app_flood_unclear": answers["unclear"], "app_flood_s": round(flood_s, 1),
        "app_flood_students_in": len(students), "app_flood_student_moves": len(record.moves),
        "app_flood_student_errors": len(record.errors) + students_in - len(students),
        "app_flood_seat_free_s": round(seat_free_s, 1),
    }


def bench_flood(gets: int = 150, concurrency: int = 10, cap: int = 20, students_in: int = 3, log=print) -> dict:
    load_before = os.getloadavg()[0]
    with App(options=("--max-kernels", str(cap))) as app:
        results = asyncio.run(run_flood(app, gets, concurrency, cap, students_in, log))
    results["app_flood_app_log_problems"] = app.problems()
    app.log.close()
    results["app_flood_leftover_processes"] = len(app.leftovers)
    results["app_flood_machine"] = (f"{os.cpu_count()} cpu, load {load_before:.2f} before the run, "
                                    f"{os.getloadavg()[0]:.2f} at the end")
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gets", type=int, default=150)
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--cap", type=int, default=20)
    parser.add_argument("--students", type=int, default=3)
    parser.add_argument("--json", metavar="OUT")
    args = parser.parse_args(argv)
    results = bench_flood(args.gets, args.concurrency, args.cap, args.students)
    print(json.dumps(results, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
