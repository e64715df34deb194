"""The names of the demo keys, and how to find them on a Redis.

Every demo queue belongs to one process: its name ends in ``@<token>``, the
owning process's token, as in ``emq:{viz-01-score@3fa9c1d2}:pc``; the owner's
lease is ``emq:{viz-@<token>}:lease`` (:func:`lease_key`), and where caps hold
its count of queues and jobs sits beside it (:func:`registry_key`). On a Redis
user of its own (a student's, :mod:`echomq_viz.redis_side.acl`) a token starts
with that user's name, escaped (:func:`namespace_of`), and one ACL key pattern
(:func:`key_pattern`) covers exactly that user's keys. :func:`scan_batches`
finds them on a server, sorted by owner. Who owns what, and the leases
themselves, are :mod:`echomq_viz.redis_side.owners`'.
"""

from __future__ import annotations

import re
from typing import Any

from echomq_viz.core.checks import check_str
from echomq_viz.core.keys import MAX_NAME_LENGTH

__all__ = ["DEMO_PREFIX", "OWNER_MARK", "NAMESPACE_MARK", "MAX_NAMESPACE", "SCAN_BATCH", "registry_key", "lease_key",
           "namespace_of", "key_pattern", "demo_owner", "owners_named_in", "scan_batches", "scan_demo_keys"]

DEMO_PREFIX = "viz-"
OWNER_MARK = "@"  # between a demo queue's base name and its owner's token
NAMESPACE_MARK = "."  # between a namespace and the random part of a token; never in a namespace
MAX_NAMESPACE = 24  # escaped; a longer one is shortened with a hash (see namespace_of)
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_TOKEN_TEXT = r"(?:[a-z0-9-]{1,%d}\.)?[0-9a-f]{8}" % MAX_NAMESPACE  # [<namespace>.]<8 hex digits>
_TOKEN = re.compile(_TOKEN_TEXT)
# A demo key: emq:{viz-<base>@<token>}:..., the base as QueueContext allows it, without '@'.
_DEMO_KEY = re.compile(r"emq:\{(viz-[^{}:@\s\x00-\x1f\x7f]+@(%s))\}:" % _TOKEN_TEXT)
# Any text naming an owner's queue or lease (an empty base too: the lease), for owners_named_in.
_DEMO_NAME = re.compile(r"(viz-[^{}:@\s\x00-\x1f\x7f]*@(%s))" % _TOKEN_TEXT)
SCAN_BATCH = 1000  # keys a SCAN call is asked for
# The keys of an owner itself: its lease, and the count of its queues' jobs where caps hold
# (lua/includes/checkJobCap.lua); a student's count, '<namespace>.registry', outlives each kernel.
_OWNER_KEY = re.compile(r"emq:\{viz-@(%s)\}:(?:lease|queues)\Z" % _TOKEN_TEXT)
_STUDENT_REGISTRY = re.compile(r"emq:\{viz-@[a-z0-9-]{1,%d}\.registry\}:queues\Z" % MAX_NAMESPACE)
# Any key some student's ACL pattern (key_pattern) lets it write: one that is none of the above
# was written by hand, not by the package, and clean takes it at once.
_IN_A_NAMESPACE = re.compile(rb"emq:\{viz-.*@[a-z0-9-]{1,%d}\.[\s\S]{8}\}:" % MAX_NAMESPACE, re.S)


def registry_key(token: str) -> str:
    """Where caps hold, the count of the owner ``token``'s queues and jobs,
    ``emq:{viz-@<token>}:queues`` (beside its lease), for an owner without a
    namespace: a student's count is ``emq:{viz-@<namespace>.registry}:queues``."""
    return lease_key(token)[:-len("lease")] + "queues"


def lease_key(token: str) -> str:
    """The key whose existence says the owner ``token`` lives,
    ``emq:{viz-@<token>}:lease``: no demo queue's keys can match it, as a
    demo name holds at least one character after ``viz-``."""
    if not _TOKEN.fullmatch(check_str("owner token", token)):
        raise ValueError(f"owner token must be 8 lowercase hex digits, after '<namespace>.' or not, "
                         f"got {token!r}")
    return f"emq:{{{DEMO_PREFIX}{OWNER_MARK}{token}}}:lease"


def namespace_of(user: str) -> str:
    """The namespace a Redis user's tokens start with: the name with every
    character but ``a-z 0-9`` written as ``-`` and two or more hex digits
    (``Alice@school.org`` -> ``-41lice-40school-2eorg``; beyond ASCII,
    each byte of its UTF-8), so two names never share one, and it never holds ``.``, ``@`` or a glob character. Past
    :data:`MAX_NAMESPACE` characters it is cut and ends in ``--`` and 8 hex
    digits of its SHA-256 (``--`` never occurs in an escaped name)."""
    import hashlib

    check_str("user name", user, max_length=512)
    raw = user.encode("utf-8", "surrogatepass")  # each byte escaped on its own: a fixed width, so one reading
    escaped = "".join(chr(byte) if chr(byte) in _PLAIN else f"-{byte:02x}" for byte in raw)
    if len(escaped) <= MAX_NAMESPACE:
        return escaped
    digest = hashlib.sha256(raw).hexdigest()[:8]
    return f"{escaped[:MAX_NAMESPACE - 10].rstrip('-')}--{digest}"


def key_pattern(namespace: str) -> str:
    """The ACL key pattern of one namespace's demo keys and leases,
    ``emq:{viz-*@<namespace>.????????}:*``. Its fixed end, ``.``, eight
    characters and ``}:``, sits right before the only ``}`` of a demo key, so
    the ``@`` before the namespace is the key's own: another namespace, even
    one ending in this one, never matches."""
    if not re.fullmatch(r"[a-z0-9-]{1,%d}" % MAX_NAMESPACE, check_str("namespace", namespace)):
        raise ValueError(f"namespace must be what namespace_of gives (1..{MAX_NAMESPACE} of a-z 0-9 -), "
                         f"got {namespace!r}")
    return f"emq:{{{DEMO_PREFIX}*{OWNER_MARK}{namespace}{NAMESPACE_MARK}????????}}:*"


def demo_owner(key: bytes) -> tuple[str, str] | None:
    """``(queue, token)`` of a demo key; None for any other key."""
    try:
        match = _DEMO_KEY.match(key.decode("utf-8"))
    except UnicodeDecodeError:
        return None
    if match is None or len(match.group(1)) > MAX_NAME_LENGTH:
        return None
    return match.group(1), match.group(2)


def owners_named_in(text: str) -> set[str]:
    """The owner tokens of the demo queues and leases that ``text`` (a key or key base) names."""
    return {match.group(2) for match in _DEMO_NAME.finditer(check_str("text", text, empty=True))}


def scan_batches(node: Any, token_glob: str):
    """Each SCAN batch of the keys of the owners ``token_glob`` matches, sorted
    as ``(owners, leases, by_hand)``: the demo keys (and an owner's count of its
    queues) as ``{token: {queue: [keys]}}``, the tokens whose lease was seen,
    and the keys in a student's namespace that the package never writes."""
    pattern = f"emq:{{{DEMO_PREFIX}*{OWNER_MARK}{token_glob}}}:*"  # no glob character in the fixed parts
    cursor = None
    while cursor != 0:
        cursor, keys = node.scan(cursor or 0, match=pattern, count=SCAN_BATCH)
        owners: dict[str, dict[str, list[bytes]]] = {}
        leases: set[str] = set()
        by_hand: list[bytes] = []
        for key in keys:
            owner = demo_owner(key)
            if owner is not None:
                owners.setdefault(owner[1], {}).setdefault(owner[0], []).append(key)
                continue
            text = key.decode("utf-8", "replace")
            own = _OWNER_KEY.match(text)
            if own is not None and text.endswith(":lease"):
                leases.add(own.group(1))
            elif own is not None:
                owners.setdefault(own.group(1), {}).setdefault("", []).append(key)
            elif not _STUDENT_REGISTRY.match(text) and _IN_A_NAMESPACE.match(key):
                by_hand.append(key)
        yield owners, leases, by_hand


def scan_demo_keys(node: Any, token_glob: str):
    """Each SCAN batch's demo keys of the owners ``token_glob`` matches, as
    ``{token: {queue: [keys]}}``."""
    for owners, _, _ in scan_batches(node, token_glob):
        yield owners
