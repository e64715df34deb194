"""A Redis reply as text, from a client that decodes and from one that does not."""

from __future__ import annotations

from echomq_viz.redis_side.replies import reply_text


def test_bytes_and_text_read_the_same():
    assert reply_text(b"7.0.15") == reply_text("7.0.15") == "7.0.15"
    assert reply_text(b"?:0") == "?:0"
    assert reply_text(3) == "3"


def test_a_stray_byte_is_replaced_or_kept_readable_as_asked():
    assert reply_text(b"job-\xff") == "job-\ufffd"
    assert reply_text(b"job-\xff", "backslashreplace") == "job-\\xff"
