"""How a Redis URL is shown anywhere: its password replaced by ``***``.

:func:`redact_url` takes any text (a URL, an error message with one or more
URLs in it, a repr) and hides every password it can find, whatever characters
the password holds:

- the userinfo of ``scheme://user:password@host``, read up to the LAST ``@``
  that a host follows, so an unencoded ``/ # ? @ :``, a space, ``%`` or any
  non-ASCII character stays inside what is hidden; a lone userinfo
  (``scheme://secret@host``) is hidden whole, as it is often meant as a password;
- ``?password=`` and ``&password=`` in a query;
- the exact password, raw and percent-decoded, of ``$REDIS_URL`` and of each
  URL the caller names (``known=``), wherever it occurs in the text: a message
  may quote it without its URL around it.

When in doubt it hides too much rather than too little. :func:`url_passwords`
is that reading of one URL. Pure: no I/O.
"""

from __future__ import annotations

import os
import re
from typing import Iterable
from urllib.parse import unquote

__all__ = ["redact_url", "first_line_redacted", "url_passwords", "split_userinfo", "without_query_passwords",
           "HIDDEN"]

HIDDEN = "***"
_ENV_URL = "REDIS_URL"
_MIN_SCRUBBED = 4  # a shorter known password is hidden only where a URL holds it: "ab" is in too many words

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
# "@" followed by a host (name, address, [v6], or nothing before a unix path) and
# then something that may follow a host in a URL or a sentence.
_AT_HOST = re.compile(r"@(?:\[[0-9A-Fa-f:.]*\]|[A-Za-z0-9._~%-]*)(?=[/?#:\s'\"<>),;]|$)")
_IN_HASH_TAG = re.compile(r"[^{}\s]*\}")  # a demo queue's "@" in emq:{viz-01@owner}:wait
_QUERY_PASSWORD = re.compile(r"(?P<key>[?&]password=)[^&\s'\"]+")


def split_userinfo(url: str) -> tuple[str, str, str] | None:
    """``(scheme://, userinfo, rest from the "@" on)`` of one URL, its userinfo
    read up to the last ``@`` a host follows; None when it has none."""
    scheme = _SCHEME.match(url)
    if scheme is None:
        return None
    at = _last_userinfo_end(url, scheme.end(), len(url))
    if at is None:
        return None
    return scheme.group(), url[scheme.end():at], url[at:]


def without_query_passwords(url: str) -> str:
    """``url`` with the value of every ``password=`` in its query taken out
    (an ``@`` there is no end of a userinfo)."""
    return re.sub(r"([?&]password=)[^&]*", r"\1", url)


def _last_userinfo_end(text: str, start: int, end: int) -> int | None:
    last = None
    for found in _AT_HOST.finditer(text, start, end):
        last = found.start()
    if last is None:  # no host after any "@": hide up to the last one outside a {hash tag}
        for at in range(end - 1, start - 1, -1):
            if text[at] == "@" and not _IN_HASH_TAG.match(text, at + 1, end):
                return at
    return last


def _hidden_userinfo(userinfo: str) -> str:
    user, colon, password = userinfo.partition(":")
    if not colon:  # a lone userinfo: a username to redis-py, but often meant as a password
        return HIDDEN if user else ""
    return f"{user}:{HIDDEN}" if password else userinfo


def url_passwords(url: str) -> set[str]:
    """Every password ``url`` holds, as written and percent-decoded: the
    userinfo's (a lone userinfo counts) and any ``password=`` in its query."""
    found = set()
    parts = split_userinfo(without_query_passwords(url))
    if parts is not None:
        user, colon, password = parts[1].partition(":")
        found.add(password if colon else user)
    for match in re.finditer(r"[?&]password=([^&]*)", url):  # to a "#" too: an unencoded one may be in it
        found |= {match.group(1), match.group(1).partition("#")[0]}
    return {form for secret in found if secret for form in (secret, unquote(secret))}


def redact_url(text: str, known: Iterable[str] = ()) -> str:
    """``text`` with the password of every URL in it replaced by ``***``:
    how a URL is printed, logged or put in an error message.

    :param known: URLs whose passwords are also hidden wherever they occur
        (``$REDIS_URL``'s always are).
    """
    secrets = set()
    for url in (*known, os.environ.get(_ENV_URL, "")):
        secrets |= url_passwords(url) if url else set()
    for secret in sorted(secrets, key=len, reverse=True):  # a longer form first: it may hold a shorter one
        if len(secret) >= _MIN_SCRUBBED:
            text = text.replace(secret, HIDDEN)
    # The query's first: a password there may hold an "@" the userinfo reading would stop at.
    text = _QUERY_PASSWORD.sub(rf"\g<key>{HIDDEN}", text)
    pieces, done = [], 0
    schemes = list(_SCHEME.finditer(text))
    for index, scheme in enumerate(schemes):
        # A URL's userinfo ends before the next URL begins, at the latest.
        end = schemes[index + 1].start() if index + 1 < len(schemes) else len(text)
        at = _last_userinfo_end(text, scheme.end(), end)
        if at is None:
            continue
        pieces += [text[done:scheme.end()], _hidden_userinfo(text[scheme.end():at])]
        done = at
    return "".join(pieces) + text[done:]


def first_line_redacted(exc: BaseException, url: str) -> str:
    """The first line of ``exc``'s text with every password masked (``url``'s wherever it
    occurs), or "" when it has no text: what a one-line refusal quotes of an error."""
    lines = redact_url(str(exc), (url,)).strip().splitlines()
    return lines[0] if lines else ""
