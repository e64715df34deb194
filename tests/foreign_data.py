"""Other people's data: 10,000 keys of every type, some with a TTL, and names
one slip of a pattern away from a demo queue's keys, to prove that what we run
beside them changes none of them.

Used by the notebooks under nbval (``tests/conftest.py`` plants it on their
server before the first cell and checks it after each notebook) and by
``tests/test_notebooks.py`` for the package's live operations.
"""

from __future__ import annotations

import math
import random
import re

import redis

from echomq_viz.core.score import priority_score

FOREIGN_KEYS = 10_000
# Names one slip of a pattern away from a demo queue's keys.
NEAR_MISSES = [
    b"emq:{viz-01-score}", b"emq:{viz-01-score-extra}:pc", b"emq:viz-01-score:pc",
    b"bull:{viz-01-score}:prioritized", b"emq:{vizier}:prioritized", b"emq:{VIZ-03-consume}:pc",
    b"emq:{viz-*}:pc", b"emq:{viz-?}:wait", b"emq:{viz-[0]}:id", b"emq:{viz-04-bands}x:pc",
    b"emq:{viz-03-consume}\x00:pc", b"\xff\xfeemq:{viz-02-compare}:pc", b"viz-01-score", b"{viz-05-frontier}:pc",
    b"emq:{orders}x", b"emq:{viz-01-score}}:pc",
]
# A demo queue's keys, and an owner's lease (emq:{viz-@<token>}:lease): what we may add.
OURS = re.compile(rb"^emq:\{viz-[^{}]*\}:")


def dump_all(client: redis.Redis) -> dict[bytes, tuple[bytes | None, bool]]:
    """Every key of the client's db: its DUMP and whether it has a TTL."""
    keys = list(client.scan_iter(count=2000))
    found: dict[bytes, tuple[bytes | None, bool]] = {}
    for start in range(0, len(keys), 1000):
        chunk = keys[start:start + 1000]
        with client.pipeline(transaction=False) as pipe:
            for key in chunk:
                pipe.dump(key)
                pipe.pttl(key)
            replies = pipe.execute()
        for key, dumped, ttl in zip(chunk, replies[::2], replies[1::2]):
            found[key] = (dumped, ttl > 0)
    return found


def load_foreign_data(client: redis.Redis) -> None:
    """10,000 unrelated keys of every type (some with a TTL), plus near misses."""
    rng = random.Random(20240606)
    names = ("user:{i}", "cache:{i}:blob", "emq:{{tenant-{i}}}:meta", "bull:mail:{i}", "viz-{i}",
             "emq:viz-{i}:pc", "sess\xe9:{i}", "q:{{{i}}}:prioritized")
    with client.pipeline(transaction=False) as pipe:
        for i in range(FOREIGN_KEYS):
            key = names[i % len(names)].format(i=i).encode()
            if i % 97 == 0:
                key = b"\xc3\x28bin:" + rng.randbytes(6) + str(i).encode()  # not UTF-8
            kind = i % 10
            if kind < 3:
                size = 65_536 if i % 1000 == 0 else rng.randint(0, 200)
                pipe.set(key, rng.randbytes(size))
            elif kind < 5:
                pipe.hset(key, mapping={f"f{n}".encode(): rng.randbytes(rng.randint(0, 30))
                                        for n in range(rng.randint(1, 10))})
            elif kind == 5:
                pipe.rpush(key, *[rng.randbytes(rng.randint(0, 20)) for _ in range(rng.randint(1, 20))])
            elif kind == 6:
                pipe.sadd(key, *{str(rng.randint(0, 10**6)) for _ in range(rng.randint(1, 20))})
            elif kind < 9:
                pipe.zadd(key, {f"m{n}": rng.choice([rng.randint(-10**6, 10**6), priority_score(3, n),
                                                     rng.random(), math.inf])
                                for n in range(rng.randint(1, 20))})
            else:
                for _ in range(rng.randint(1, 5)):
                    pipe.xadd(key, {"event": "added", "n": str(i)})
            if i % 7 == 0:
                pipe.expire(key, 3600 + i)
            if i % 1000 == 999:
                pipe.execute()
        for n, key in enumerate(NEAR_MISSES):
            if n % 2:
                pipe.zadd(key, {"1": priority_score(1, 1), "2": priority_score(1, 2)})
            else:
                pipe.set(key, b"near miss " + key)
        pipe.execute()


def changes(before: dict, after: dict, ours: re.Pattern | None = OURS) -> list[str]:
    """What happened to other people's keys between two :func:`dump_all`: each key missing,
    changed or with its TTL gone or added, and each key added that ``ours`` does not match
    (None: any key added); [] if none."""
    found = []
    for what, keys in (("missing", [key for key in before if key not in after]),
                       ("changed", [key for key in before if key in after and after[key][0] != before[key][0]]),
                       ("TTL changed", [key for key in before if key in after and after[key][1] != before[key][1]]),
                       ("added, not a demo key", [key for key in after if key not in before
                                                   and not (ours and ours.match(key))])):
        if keys:
            found.append(f"{len(keys)} {what}: {keys[:5]}")
    return found


class Planted:
    """Other people's data on a throwaway server (db 0, and a key in db 1 under a demo key's
    name): :meth:`changes` says what happened to it since it was planted."""

    def __init__(self, client: redis.Redis, other_db: redis.Redis) -> None:
        self.client, self.other_db = client, other_db
        load_foreign_data(client)
        other_db.set("db1-key", b"\x00\x01")
        other_db.zadd("emq:{viz-01-score}:prioritized", {"1": 1})  # our name, another database
        self.before, self.other_before = dump_all(client), dump_all(other_db)

    def changes(self) -> list[str]:
        return changes(self.before, dump_all(self.client)) + [
            f"db 1: {change}" for change in changes(self.other_before, dump_all(self.other_db), ours=None)]
