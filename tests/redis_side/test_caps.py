"""Caps on jobs, kept by Redis and enforced by the Lua where the write
happens: per queue, per student (every queue of theirs, counted afresh before
refusing), queues per student and bytes per job, each refusal one line naming
its cap with nothing written; on 6.2 (EVALSHA, the app's private server) as
on 7 (FCALL); none where no caps are set, none on a queue that is no demo."""

from __future__ import annotations

import pytest
import redis

from conftest import one_clear_line
from echomq_viz.core.keys import Keys, QueueContext
from echomq_viz.experiments.live import Demo
from echomq_viz.redis_side.caps import DEFAULT_CAPS, JobCaps, caps_key, clear_caps, read_caps, set_caps
from echomq_viz.redis_side.demo_keys import registry_key
from echomq_viz.redis_side.scripts import BatchError, Scripts

SMALL = JobCaps(queue_jobs=30, student_jobs=50, student_queues=3, job_bytes=64)


@pytest.fixture
def capped(r):
    """The app's setting on a private server: every kernel a student with SMALL caps."""
    set_caps(r, SMALL)
    yield r
    clear_caps(r)


def refused(error: BaseException, *words: str) -> bool:
    return one_clear_line(str(error)) and all(word in str(error) for word in words)


def test_caps_are_checked_in_one_line_each():
    for kwargs, message in (({"queue_jobs": 0}, "queue_jobs must be in 1..1,000,000"),
                            ({"job_bytes": 70_000}, "job_bytes must be in 1..65,536"),
                            ({"queue_jobs": 10, "student_jobs": 5}, "student_jobs must be at least queue_jobs"),
                            ({"student_queues": True}, "student_queues must be")):
        with pytest.raises((TypeError, ValueError), match=message) as info:
            JobCaps(**kwargs)
        assert one_clear_line(str(info.value))
    with pytest.raises(ValueError, match="namespace must be"):
        caps_key("Alice")
    assert DEFAULT_CAPS.queue_jobs == 5_000 and DEFAULT_CAPS.describe().startswith("5,000 jobs a queue")


def test_caps_are_stored_read_back_and_cleared(r):
    assert read_caps(r) is None
    assert set_caps(r, SMALL, namespace="alice") == "emq:caps:alice"
    assert read_caps(r, namespace="alice") == SMALL and read_caps(r) is None
    assert clear_caps(r, namespace="alice") and not clear_caps(r, namespace="alice")


def test_a_queue_takes_jobs_up_to_its_cap_and_refuses_the_next_changing_nothing(capped, keyspace):
    demo = Demo("viz-capped", client=capped)
    assert len(demo.add_batch([1] * 30)) == 30
    before = keyspace()
    for add in (lambda: demo.add("one-more", 2), lambda: demo.add_waiting("w")):
        with pytest.raises(redis.ResponseError) as info:
            add()
        assert refused(info.value, "at most 30 jobs", "queue_jobs", demo.queue)
    with pytest.raises(redis.ResponseError) as info:
        demo.scripts.add_delayed_job(demo.ctx, "later", {}, 1, 1000)
    assert refused(info.value, "queue_jobs")
    assert keyspace() == before  # refused before the first write
    assert demo.reset() > 0 and demo.add("again", 1) == "1"


def test_a_bulk_add_stops_at_the_cap_and_says_how_many_went_in(capped):
    demo = Demo("viz-bulk", client=capped)
    with pytest.raises(BatchError) as info:
        demo.add_batch([1] * 100)
    assert refused(info.value, "queue_jobs", "30 of 100 jobs went in")
    assert len(info.value.ids) == 30 == len(demo.entries())


def test_a_student_is_capped_across_queues_and_a_reset_makes_room(capped):
    first, second, third = (Demo(f"viz-s{n}", client=capped) for n in range(3))
    first.add_batch([1] * 30)
    second.add_batch([1] * 20)
    with pytest.raises(redis.ResponseError) as info:
        third.add("past", 1)
    assert refused(info.value, "at most 50 jobs", "student_jobs", f"owner {first.owner} holds 50")
    first.reset()  # its count is kept too high until a refusal counts every queue afresh
    assert third.add("now", 1) == "1"
    counted = capped.hgetall(registry_key(first.owner))
    assert counted == {Keys.base(second.ctx): "20", Keys.base(third.ctx): "1", "total": "21"}


def test_a_student_fills_at_most_so_many_queues(capped):
    demos = [Demo(f"viz-q{n}", client=capped) for n in range(4)]
    for demo in demos[:3]:
        demo.add("a", 1)
    with pytest.raises(redis.ResponseError) as info:
        demos[3].add("a", 1)
    assert refused(info.value, "at most 3 queues", "student_queues")
    demos[0].reset()
    assert demos[3].add("a", 1) == "1"


def test_a_job_is_capped_in_bytes(capped):
    demo = Demo("viz-bytes", client=capped)
    with pytest.raises(redis.ResponseError) as info:
        demo.add("n", 1, {"text": "x" * 60})
    assert refused(info.value, "at most 64 bytes", "job_bytes", "got 72")
    assert demo.add("n", 1, {"text": "x" * 40}) == "1"


def test_a_job_of_exactly_the_cap_in_bytes_goes_in_and_one_byte_more_does_not(capped):
    from echomq_viz.redis_side.scripts import encode_job_data

    demo = Demo("viz-edge", client=capped)
    data = {"text": "x" * (64 - 1 - len(encode_job_data({"text": ""})))}  # name "n" + data: 64 bytes
    assert 1 + len(encode_job_data(data)) == 64 and demo.add("n", 1, data) == "1"
    with pytest.raises(redis.ResponseError) as info:
        demo.add("nn", 1, data)
    assert refused(info.value, "at most 64 bytes", "got 65")


def test_a_registry_flooded_by_hand_is_refused_before_it_is_walked(capped, keyspace):
    """Past 256 entries (or four times the queues cap) only writes by hand make a student's registry
    that long: refused in one line rather than read whole at every add."""
    demo = Demo("viz-flood", client=capped)
    capped.hset(registry_key(demo.owner), mapping={f"field-{n}": "1" for n in range(256)})
    assert demo.add("a", 1) == "1"  # 256: recounted, none of them a live queue
    capped.hset(registry_key(demo.owner), mapping={f"field-{n}": "1" for n in range(257)})  # that add recounted
    entries = capped.hlen(registry_key(demo.owner))
    before = keyspace()
    with pytest.raises(redis.ResponseError) as info:
        demo.add("b", 1)
    assert refused(info.value, f"has {entries} entries", "far past the 3 queues")
    assert keyspace() == before


def test_no_caps_where_none_are_set_nor_on_a_queue_that_is_no_demo(r, capped):
    plain = Scripts(capped)
    ids = plain.add_prioritized_jobs(QueueContext("orders"), [("j", {}, 1)] * 100)
    assert len(ids) == 100  # a queue of its own name, not a demo's: the caps are the demos'
    clear_caps(capped)
    assert len(Demo("viz-free", client=capped).add_batch([1] * 100)) == 100


def test_a_caps_hash_holding_nonsense_refuses_every_add(capped):
    capped.hset(caps_key(), "queue_jobs", "lots")
    with pytest.raises(redis.ResponseError) as info:
        Demo("viz-odd", client=capped).add("a", 1)
    assert refused(info.value, "queue_jobs in emq:caps must be a whole number")
