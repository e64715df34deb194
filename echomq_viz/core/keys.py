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

from echomq_viz.core.checks import check_text, describe

__all__ = [
    "QueueContext",
    "Keys",
    "KEY_TYPES",
    "MAX_NAME_LENGTH",
    "FORMAT_CHARACTERS",
    "validate_job_id",
    "key_slot",
]

MAX_NAME_LENGTH = 100  # queue names, prefixes and job ids; long enough for any real one

# The key types of one queue (EchoMQ's protocol), the one list: the builders
# ``Keys.prioritized(ctx)``, ``Keys.pc(ctx)``, ... are made from it below. A job
# id may not take one of these names: its hash ``emq:{Q}:<id>`` would be that key.
KEY_TYPES = (
    "prioritized", "pc", "id", "marker", "meta", "events", "wait", "active",
    "delayed", "completed", "stalled", "limiter", "paused",
)

# Braces and ':' would break the key layout; whitespace and control characters
# (C0, DEL, C1) make keys that cannot be told apart on screen. checkJobId.lua
# applies the same rule to job ids.
_FORBIDDEN = re.compile(r"[{}:\s\x00-\x1f\x7f-\x9f]")
# Unicode's format characters (category Cf, as of Unicode 15.1): zero-width
# spaces and joiners, bidi controls, the BOM, tags. Invisible, so "a" and
# "a\u200b" would be two queues nobody can tell apart. checkJobId.lua has the
# same ranges.
FORMAT_CHARACTERS = (
    (0x00AD, 0x00AD), (0x0600, 0x0605), (0x061C, 0x061C), (0x06DD, 0x06DD), (0x070F, 0x070F),
    (0x0890, 0x0891), (0x08E2, 0x08E2), (0x180E, 0x180E), (0x200B, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x2064), (0x2066, 0x206F), (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD),
    (0x110CD, 0x110CD), (0x13430, 0x1343F), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
)
_INVISIBLE = re.compile("[" + "".join(f"{chr(low)}-{chr(high)}" for low, high in FORMAT_CHARACTERS) + "]")


def _validate_name(what: str, value: object) -> str:
    check_text(what, value, max_length=MAX_NAME_LENGTH)
    bad = _FORBIDDEN.search(value)
    if bad:
        raise ValueError(f"{what} must not contain '{{', '}}', ':', whitespace or control characters "
                         f"(the emq:{{queue}}:type key layout), got {bad.group()!r} in {value!r}")
    bad = _INVISIBLE.search(value)
    if bad:
        raise ValueError(f"{what} must not contain invisible format characters (zero-width, bidi controls: "
                         f"nobody could see them), got U+{ord(bad.group()):04X} at character {bad.start() + 1} "
                         f"in {value!r}")
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
    """Key builders named after EchoMQ's ``EchoMQ.Keys`` functions: one per
    name in :data:`KEY_TYPES` (``Keys.prioritized(ctx)``, ``Keys.pc(ctx)``, ...),
    plus the job, lock and SCAN-pattern keys."""

    @staticmethod
    def base(ctx: QueueContext) -> str:
        """The key prefix of the queue, ``emq:{Q}:``; scripts append job ids to it."""
        if not isinstance(ctx, QueueContext):
            raise TypeError(f"ctx must be a QueueContext, e.g. QueueContext('orders'), got {describe(ctx)}")
        return f"{ctx.prefix}:{{{ctx.queue}}}:"

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
        base = Keys.base(ctx)
        return {key_type: base + key_type for key_type in KEY_TYPES}


def _key_builder(key_type: str):
    def build(ctx: QueueContext) -> str:
        return Keys.base(ctx) + key_type

    build.__name__, build.__qualname__ = key_type, f"Keys.{key_type}"
    build.__doc__ = f"The queue's {key_type!r} key, ``emq:{{Q}}:{key_type}``."
    return staticmethod(build)


for _key_type in KEY_TYPES:
    setattr(Keys, _key_type, _key_builder(_key_type))
del _key_type


def validate_job_id(job_id: object, *, existing: bool = False) -> str:
    """Return a job id after checking its job hash ``emq:{Q}:<id>`` can be no
    other key: 1..100 characters, UTF-8 encodable, none of them ``{``, ``}``,
    ``:``, whitespace, a control or an invisible format character
    (:data:`FORMAT_CHARACTERS`), and not a key type name.

    A new custom id may not be a plain integer either (auto ids are); with
    ``existing``, the id of a job that may exist, an auto id is fine.
    The Lua include ``checkJobId`` applies the same rule.
    """
    job_id = _validate_name("job id", job_id)
    if not existing and re.fullmatch(r"[0-9]+", job_id):
        raise ValueError(f"custom job id must not be a plain integer (auto ids are), got {job_id!r}")
    if job_id in KEY_TYPES:
        raise ValueError(f"job id must not be a key type name ({', '.join(KEY_TYPES)}: its job hash "
                         f"would be that key), got {job_id!r}")
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
    if not isinstance(key, (str, bytes, bytearray, memoryview)):  # bytes(5) is five NUL bytes: a real key
        raise TypeError(f"key must be a str or bytes, got {describe(key)}")
    raw = key.encode() if isinstance(key, str) else bytes(key)
    start = raw.find(b"{")
    if start != -1:
        end = raw.find(b"}", start + 1)
        if end > start + 1:  # an empty tag "{}" does not count
            raw = raw[start + 1:end]
    return _crc16_xmodem(raw) % 16384
