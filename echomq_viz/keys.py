"""Every Redis key of a queue, built in one place.

All keys of queue ``Q`` share the layout ``emq:{Q}:<type>``: the prefix, the
queue name wrapped in a Redis Cluster hash tag, then the key type. Redis
hashes only the text between the first ``{`` and the next ``}``, so every key
of one queue lands in the same cluster slot and one Lua script may touch them
all. A queue name holding ``{``, ``}`` or ``:`` would break that layout, so
:class:`QueueContext` refuses it. No other module builds key strings.

Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "QueueContext",
    "Keys",
    "KEY_TYPES",
    "MAX_NAME_LENGTH",
    "validate_job_id",
    "key_slot",
]

MAX_NAME_LENGTH = 100  # queue names and prefixes; long enough for any real queue

# The key types of one queue (PROTOCOL.md). A custom job id may not take one of
# these names: its job hash ``emq:{Q}:<id>`` would overwrite that key.
KEY_TYPES = (
    "prioritized", "pc", "id", "marker", "meta", "events", "wait", "active",
    "delayed", "completed", "stalled", "limiter", "paused",
)

_FORBIDDEN = re.compile(r"[{}:\s\x00-\x1f\x7f]")


def _validate_name(what: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, got {type(value).__name__} {value!r}")
    if not value:
        raise ValueError(f"{what} must not be empty")
    if len(value) > MAX_NAME_LENGTH:
        raise ValueError(f"{what} must be at most {MAX_NAME_LENGTH} characters, got {len(value)}")
    bad = _FORBIDDEN.search(value)
    if bad:
        raise ValueError(
            f"{what} {value!r} contains {bad.group()!r}: '{{', '}}', ':', whitespace and "
            "control characters would break the emq:{queue}:type key layout"
        )
    return value


@dataclass(frozen=True)
class QueueContext:
    """Which queue a call is about: a validated prefix and queue name."""

    queue: str
    prefix: str = "emq"

    def __post_init__(self) -> None:
        _validate_name("queue name", self.queue)
        _validate_name("key prefix", self.prefix)


class Keys:
    """Key builders named after EchoMQ's ``EchoMQ.Keys`` functions."""

    @staticmethod
    def base(ctx: QueueContext) -> str:
        """The key prefix of the queue, ``emq:{Q}:``; scripts append job ids to it."""
        if not isinstance(ctx, QueueContext):
            raise TypeError(f"expected a QueueContext, e.g. QueueContext('orders'), got "
                            f"{type(ctx).__name__} {ctx!r}")
        return f"{ctx.prefix}:{{{ctx.queue}}}:"

    @staticmethod
    def prioritized(ctx: QueueContext) -> str:
        """The sorted set of prioritized job ids, ``emq:{Q}:prioritized``."""
        return Keys.base(ctx) + "prioritized"

    @staticmethod
    def pc(ctx: QueueContext) -> str:
        """The priority counter whose INCR fills the low 32 bits, ``emq:{Q}:pc``."""
        return Keys.base(ctx) + "pc"

    @staticmethod
    def id(ctx: QueueContext) -> str:
        return Keys.base(ctx) + "id"

    @staticmethod
    def marker(ctx: QueueContext) -> str:
        return Keys.base(ctx) + "marker"

    @staticmethod
    def meta(ctx: QueueContext) -> str:
        return Keys.base(ctx) + "meta"

    @staticmethod
    def events(ctx: QueueContext) -> str:
        return Keys.base(ctx) + "events"

    @staticmethod
    def wait(ctx: QueueContext) -> str:
        return Keys.base(ctx) + "wait"

    @staticmethod
    def active(ctx: QueueContext) -> str:
        return Keys.base(ctx) + "active"

    @staticmethod
    def delayed(ctx: QueueContext) -> str:
        return Keys.base(ctx) + "delayed"

    @staticmethod
    def completed(ctx: QueueContext) -> str:
        return Keys.base(ctx) + "completed"

    @staticmethod
    def stalled(ctx: QueueContext) -> str:
        return Keys.base(ctx) + "stalled"

    @staticmethod
    def limiter(ctx: QueueContext) -> str:
        return Keys.base(ctx) + "limiter"

    @staticmethod
    def paused(ctx: QueueContext) -> str:
        return Keys.base(ctx) + "paused"

    @staticmethod
    def job(ctx: QueueContext, job_id: str) -> str:
        """The hash of one job, ``emq:{Q}:<jobId>``."""
        return Keys.base(ctx) + str(job_id)

    @staticmethod
    def lock(ctx: QueueContext, job_id: str) -> str:
        """The lock of an active job, ``emq:{Q}:<jobId>:lock``."""
        return Keys.job(ctx, job_id) + ":lock"

    @staticmethod
    def pattern(ctx: QueueContext) -> str:
        """A SCAN MATCH pattern for every key of this queue and nothing else."""
        return re.sub(r"([*?\[\]\\])", r"\\\1", Keys.base(ctx)) + "*"

    @staticmethod
    def all_types(ctx: QueueContext) -> dict[str, str]:
        """Every fixed key of the queue by type name."""
        return {name: getattr(Keys, name)(ctx) for name in KEY_TYPES}


def validate_job_id(job_id: object) -> str:
    """Return a custom job id after checking it cannot collide with another key.

    Auto ids are integers, so a custom id may not be one; nor a key type name,
    nor contain ``:`` or braces (the job key ``emq:{Q}:<id>`` would then clash
    with a lock or another queue's keys).
    """
    _validate_name("job id", job_id)
    assert isinstance(job_id, str)
    if re.fullmatch(r"[0-9]+", job_id):
        raise ValueError(f"custom job id {job_id!r} must not be a plain integer: auto ids are integers")
    if job_id in KEY_TYPES:
        raise ValueError(f"custom job id {job_id!r} is a key type name and would overwrite that key")
    return job_id


def _crc16_xmodem(data: bytes) -> int:
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def key_slot(key: str | bytes) -> int:
    """The Redis Cluster slot of a key: CRC16 of its hash tag (or whole key) mod 16384."""
    raw = key.encode() if isinstance(key, str) else bytes(key)
    start = raw.find(b"{")
    if start != -1:
        end = raw.find(b"}", start + 1)
        if end > start + 1:  # an empty tag "{}" does not count
            raw = raw[start + 1:end]
    return _crc16_xmodem(raw) % 16384
