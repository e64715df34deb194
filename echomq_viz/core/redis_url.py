"""A Redis URL as redis-py reads it, against how it looks.

redis-py parses a URL with ``urllib.parse``, which ends the host part at the
first ``/ ? #``: a password holding one unencoded names another host and port.
It also takes a path that is not a number as database 0. :func:`url_problem`
says which, in one line with no password, before a URL is ever used.
"""

from __future__ import annotations

import re

from echomq_viz.core.redaction import redact_url, split_userinfo, without_query_passwords

__all__ = ["url_problem"]

_ESCAPES = {"/": "%2F", "?": "%3F", "#": "%23"}


def url_problem(url: str) -> str | None:
    """Why redis-py would read ``url`` otherwise than it looks, or None.

    redis-py (``urllib.parse``) ends the host part at the first ``/ ? #``, so
    ``redis://u:Top/Secret@h`` would name the host ``u`` and the port ``Top``;
    and it takes a path that is not a number, ``redis://h/abc``, as database 0.
    """
    from urllib.parse import urlsplit

    probe = without_query_passwords(url)  # a password in the query may hold an "@"
    ours = split_userinfo(probe)
    netloc = urlsplit(probe).netloc
    if ours is not None and ("@" not in netloc or netloc.rpartition("@")[0] != ours[1]):
        odd = sorted({char for char in ours[1] if char in _ESCAPES}) or sorted(_ESCAPES)
        return (f"its user name or password holds an unencoded {' '.join(odd)}, which ends the host part "
                f"of a URL: write it as {' '.join(_ESCAPES[char] for char in odd)}")
    parts = urlsplit(url)
    if parts.scheme in ("redis", "rediss") and not re.fullmatch(r"/?|/[0-9]+", parts.path):
        shown = redact_url(parts.path, (url,))
        return f"the path must be /<database number>, e.g. /0, got {shown!r}"
    return None
