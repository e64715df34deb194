# Pure tests of the key layout (echomq_viz.core.keys); no Redis.
# Slots are checked against redis-py's own implementation and the CRC16 check
# value; SCAN patterns against a small Redis-glob matcher written here.

from __future__ import annotations

import binascii
import unicodedata

import pytest
import redis.crc
from hypothesis import example, given, settings
from hypothesis import strategies as st

from test_checks import assert_refuses
from echomq_viz.core.keys import (
    FORMAT_CHARACTERS, KEY_TYPES, MAX_NAME_LENGTH, Keys, QueueContext, key_slot, validate_job_id,
)

FAST = settings(max_examples=400, deadline=None)

# Every key type of the BullMQ protocol, written out here so a missing one shows.
PROTOCOL_TYPES = {
    "prioritized", "pc", "id", "marker", "meta", "events", "wait", "active",
    "delayed", "completed", "stalled", "limiter", "paused",
}

# Characters the validator allows in a queue name, glob metacharacters included.
name_chars = st.characters(
    blacklist_categories=("Cs", "Cc", "Cf", "Zs", "Zl", "Zp"),
    blacklist_characters="{}:\x85\x1c\x1d\x1e\x1f",
)
queue_names = st.text(name_chars, min_size=1, max_size=30).filter(
    lambda s: not any(ch.isspace() or any(low <= ord(ch) <= high for low, high in FORMAT_CHARACTERS) for ch in s))


def redis_glob(pattern: str, text: str) -> bool:
    # Minimal port of Redis' stringmatchlen: *, ?, [..] with ^ and ranges, \ escapes.
    def match(pi: int, ti: int) -> bool:
        while pi < len(pattern):
            ch = pattern[pi]
            if ch == "*":
                while pi < len(pattern) and pattern[pi] == "*":
                    pi += 1
                if pi == len(pattern):
                    return True
                return any(match(pi, k) for k in range(ti, len(text) + 1))
            if ti >= len(text):
                return False
            if ch == "?":
                pi += 1
                ti += 1
                continue
            if ch == "[":
                pi += 1
                negate = pi < len(pattern) and pattern[pi] == "^"
                if negate:
                    pi += 1
                found = False
                while pi < len(pattern) and pattern[pi] != "]":
                    if pattern[pi] == "\\" and pi + 1 < len(pattern):
                        pi += 1
                        found |= pattern[pi] == text[ti]
                        pi += 1
                    elif pi + 2 < len(pattern) and pattern[pi + 1] == "-" and pattern[pi + 2] != "]":
                        lo, hi = sorted((pattern[pi], pattern[pi + 2]))
                        found |= lo <= text[ti] <= hi
                        pi += 3
                    else:
                        found |= pattern[pi] == text[ti]
                        pi += 1
                pi += 1  # the closing ]
                if found == negate:
                    return False
                ti += 1
                continue
            if ch == "\\" and pi + 1 < len(pattern):
                pi += 1
                ch = pattern[pi]
            if ch != text[ti]:
                return False
            pi += 1
            ti += 1
        return ti == len(text)

    return match(0, 0)


def test_glob_helper_sanity():
    # The matcher must itself behave like Redis before it can judge Keys.pattern.
    assert redis_glob("emq:{a*b?c[d]}:*", "emq:{aXXbYcd}:wait")  # unescaped metacharacters are wild
    assert not redis_glob(r"emq:{a\*b}:*", "emq:{aXb}:wait")
    assert redis_glob(r"emq:{a\*b}:*", "emq:{a*b}:wait")
    assert redis_glob("h[^e]llo", "hallo") and not redis_glob("h[^e]llo", "hello")
    assert redis_glob("h[a-c]llo", "hbllo") and not redis_glob("h[a-c]llo", "hdllo")
    assert redis_glob(r"a[\]]b", "a]b")


def all_keys(ctx: QueueContext, job_id: str = "job-1") -> list[str]:
    return [*Keys.all_types(ctx).values(), Keys.job(ctx, job_id), Keys.lock(ctx, job_id), Keys.job(ctx, "42")]


# -- layout -----------------------------------------------------------------------


def test_seed_helpers():
    # The two helpers the seed names, with the exact strings it gives.
    q = QueueContext("q")
    assert Keys.prioritized(q) == "emq:{q}:prioritized"
    assert Keys.pc(q) == "emq:{q}:pc"


def test_key_types_match_protocol():
    assert set(KEY_TYPES) == PROTOCOL_TYPES
    assert len(KEY_TYPES) == len(PROTOCOL_TYPES)


@pytest.mark.parametrize("key_type", sorted(PROTOCOL_TYPES))
def test_every_type_follows_layout(key_type):
    q = QueueContext("orders")
    assert getattr(Keys, key_type)(q) == "emq:{orders}:" + key_type
    assert Keys.all_types(q)[key_type] == "emq:{orders}:" + key_type


def test_all_types_is_complete():
    q = QueueContext("orders")
    assert Keys.all_types(q) == {t: f"emq:{{orders}}:{t}" for t in PROTOCOL_TYPES}


def test_base_job_and_lock_keys():
    q = QueueContext("orders")
    assert Keys.base(q) == "emq:{orders}:"
    assert Keys.job(q, "job-1") == "emq:{orders}:job-1"
    assert Keys.job(q, "17") == "emq:{orders}:17"
    assert Keys.lock(q, "job-1") == "emq:{orders}:job-1:lock"


def test_custom_prefix():
    q = QueueContext("orders", prefix="bull")
    assert Keys.prioritized(q) == "bull:{orders}:prioritized"
    assert Keys.lock(q, "7") == "bull:{orders}:7:lock"
    assert Keys.pattern(q) == "bull:{orders}:*"


def test_default_prefix_is_emq():
    assert QueueContext("x").prefix == "emq"
    assert QueueContext("x") == QueueContext("x", "emq")


# -- queue-name validation ------------------------------------------------------------


@pytest.mark.parametrize(
    "bad, why",
    [
        ("", "empty"),
        ("a{b", "'{'"),
        ("a}b", "'}'"),
        ("{q}", "'{'"),
        ("a:b", "':'"),
        (" a", "' '"),
        ("a b", "' '"),
        ("a\n", r"'\\n'"),
        ("a\tb", r"'\\t'"),
        ("a\x00b", r"'\\x00'"),
        ("a\x7fb", r"'\\x7f'"),
        ("x" * (MAX_NAME_LENGTH + 1), str(MAX_NAME_LENGTH)),
    ],
    ids=repr,
)
def test_invalid_queue_names(bad, why):
    # Each refusal must say what is wrong, not just that something is.
    with pytest.raises(ValueError, match=why):
        QueueContext(bad)


@pytest.mark.parametrize("bad", [None, 5, b"q", ["q"]], ids=repr)
def test_non_str_queue_names(bad):
    with pytest.raises(TypeError, match="must be a str"):
        QueueContext(bad)


def test_name_length_limit_is_inclusive():
    assert MAX_NAME_LENGTH == 100
    long_name = "x" * MAX_NAME_LENGTH
    assert Keys.pc(QueueContext(long_name)) == f"emq:{{{long_name}}}:pc"


@pytest.mark.parametrize("bad", ["", "a:b", "{emq}", "b ull", None])
def test_invalid_prefixes(bad):
    with pytest.raises((ValueError, TypeError), match="prefix"):
        QueueContext("q", prefix=bad)


def test_queue_context_is_frozen():
    q = QueueContext("q")
    with pytest.raises(AttributeError):
        q.queue = "a:b"  # would bypass validation


# -- job ids ------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["123", "0", "007", "pc", "prioritized", "wait", "id", "a:b", "a{b", ""])
def test_validate_job_id_rejects(bad):
    # Plain integers clash with auto ids, type names overwrite queue keys.
    with pytest.raises(ValueError):
        validate_job_id(bad)


@pytest.mark.parametrize("key_type", sorted(PROTOCOL_TYPES))
def test_no_key_type_is_a_valid_job_id(key_type):
    with pytest.raises(ValueError, match="key type"):
        validate_job_id(key_type)


def test_integer_job_id_message_says_why():
    with pytest.raises(ValueError, match="integer"):
        validate_job_id("123")


@pytest.mark.parametrize("good", ["job-1", "a1", "order_42", "-1", "PC", "lock"])
def test_validate_job_id_accepts(good):
    assert validate_job_id(good) == good


@pytest.mark.parametrize("bad", [123, None, b"job"], ids=repr)
def test_validate_job_id_rejects_non_str(bad):
    with pytest.raises(TypeError):
        validate_job_id(bad)


# -- cluster slots -----------------------------------------------------------------------


def test_crc16_check_value():
    # CRC-16/XMODEM of "123456789" is 0x31C3; 12739 < 16384, so the slot equals it.
    assert key_slot("123456789") == 0x31C3 == 12739
    assert key_slot(b"123456789") == 12739


def test_cluster_spec_examples():
    # From the Redis Cluster spec: these two share the tag "user1000".
    assert key_slot("{user1000}.following") == key_slot("{user1000}.followers")
    assert key_slot("{user1000}.following") == key_slot("user1000")
    # Only the first {...} counts.
    assert key_slot("foo{bar}{zap}") == key_slot("bar")
    assert key_slot("foo{{bar}}zap") == key_slot("{bar")


def test_empty_tag_hashes_whole_key():
    key = "foo{}{bar}"
    assert key_slot(key) == binascii.crc_hqx(key.encode(), 0) % 16384
    assert key_slot(key) != key_slot("bar")
    assert key_slot("{}") == binascii.crc_hqx(b"{}", 0) % 16384


def test_unclosed_tag_hashes_whole_key():
    assert key_slot("foo{bar") == binascii.crc_hqx(b"foo{bar", 0) % 16384


@FAST
@given(st.text(max_size=40))
@example("{}")
@example("{a}")
@example("a{b")
@example("}{x}")
@example("{{}}")
def test_key_slot_agrees_with_redis_py(key):
    raw = key.encode()
    assert key_slot(key) == redis.crc.key_slot(raw)
    assert key_slot(raw) == redis.crc.key_slot(raw)
    assert 0 <= key_slot(key) < 16384


@FAST
@given(queue_names, st.sampled_from(["emq", "bull", "x"]))
def test_all_keys_of_a_queue_share_one_slot(queue, prefix):
    # One Lua script may touch every key of a queue only if they hash alike.
    q = QueueContext(queue, prefix)
    slots = {key_slot(k) for k in all_keys(q)}
    assert slots == {redis.crc.key_slot(queue.encode())}


# -- SCAN pattern -----------------------------------------------------------------------


def test_pattern_plain_name():
    assert Keys.pattern(QueueContext("orders")) == "emq:{orders}:*"


def test_pattern_escapes_glob_characters():
    q = QueueContext("a*b?c[d]")
    assert Keys.pattern(q) == r"emq:{a\*b\?c\[d\]}:*"
    assert Keys.pattern(QueueContext("a\\b")) == r"emq:{a\\b}:*"


def test_pattern_matches_own_keys_and_not_lookalikes():
    q = QueueContext("a*b?c[d]")
    pattern = Keys.pattern(q)
    for key in all_keys(q):
        assert redis_glob(pattern, key), key
    for other in ["aXb?c[d]", "a*bXc[d]", "a*b?cd", "a*b?c[d]2", "a*b?c[d", "ab?c[d]"]:
        for key in all_keys(QueueContext(other)):
            assert not redis_glob(pattern, key), (other, key)


@FAST
@given(queue_names, queue_names)
@example("a*b?c[d]", "aXb?c[d]")
@example("*", "anything")
@example("q", "qq")
@example("a\\", "a")
def test_pattern_selects_exactly_one_queue(queue, other):
    # reset() deletes what SCAN MATCH finds: it must never reach another queue.
    pattern = Keys.pattern(QueueContext(queue))
    for key in all_keys(QueueContext(queue)):
        assert redis_glob(pattern, key)
    if other != queue:
        for key in all_keys(QueueContext(other)):
            assert not redis_glob(pattern, key)
    # Another prefix is another namespace.
    assert not redis_glob(pattern, Keys.pc(QueueContext(queue, prefix="bull")))


# -- one list of key names ------------------------------------------------------------


def test_every_builder_is_made_from_the_one_list_of_names():
    import inspect

    from echomq_viz.core import keys as keys_module

    source = inspect.getsource(keys_module)
    for key_type in KEY_TYPES:
        builder = getattr(Keys, key_type)
        assert builder.__name__ == key_type and key_type in builder.__doc__
        assert f"def {key_type}(" not in source  # no hand-written copy
        assert source.count(f'"{key_type}"') == 1  # named once, in KEY_TYPES
    assert set(Keys.all_types(QueueContext("q"))) == set(KEY_TYPES)


# -- the job-id rule, shared with lua/includes/checkJobId.lua ----------------------------


@pytest.mark.parametrize("bad, why", [
    ("a\x85b", r"'\\x85'"),             # NEL: whitespace to Python
    ("a\x9bb", r"'\\x9b'"),             # a C1 control character
    ("a\u00a0b", r"'\\xa0'"),           # no-break space
    ("a\u2028b", r"'\\u2028'"),         # line separator
    ("a\u3000b", r"'\\u3000'"),         # ideographic space
    ("a\ud800b", "must be UTF-8 encodable"),  # a lone surrogate
    ("x" * 101, "1..100 characters"),
])
def test_validate_job_id_rejects_invisible_and_unencodable_characters(bad, why):
    with pytest.raises(ValueError, match=why):
        validate_job_id(bad)
    with pytest.raises(ValueError, match=why):
        validate_job_id(bad, existing=True)


@pytest.mark.parametrize("good", ["é" * 100, "😀", "job-ü", "a\u0301", "عربي"])
def test_validate_job_id_accepts_other_unicode(good):
    assert validate_job_id(good) == good


@pytest.mark.parametrize("bad", ["a\u200bb", "\ufeffq", "q\u200d", "ab\u202e", "a\u2066b", "a\u00adb",
                                 "a\U000e0041"], ids=["zero-width space", "BOM", "zero-width joiner",
                                                       "right-to-left override", "isolate", "soft hyphen", "tag"])
def test_an_invisible_format_character_is_refused_in_every_name(bad):
    code = f"U+{ord(next(ch for ch in bad if unicodedata.category(ch) == 'Cf')):04X}"
    for make in (QueueContext, lambda name: QueueContext("q", name), validate_job_id):
        with pytest.raises(ValueError) as info:
            make(bad)
        message = str(info.value)
        assert "invisible format characters" in message and code in message and len(message.splitlines()) == 1


def test_every_format_character_unicode_knows_is_in_the_ranges():
    format_characters = [chr(code) for code in range(0x110000) if unicodedata.category(chr(code)) == "Cf"]
    assert len(format_characters) > 150
    for char in format_characters:
        assert any(low <= ord(char) <= high for low, high in FORMAT_CHARACTERS), f"U+{ord(char):04X}"
        with pytest.raises(ValueError, match="invisible format characters"):
            QueueContext(f"q{char}")


def test_existing_job_ids_may_be_integers_but_never_key_types():
    assert validate_job_id("17", existing=True) == "17"
    with pytest.raises(ValueError, match="key type name"):
        validate_job_id("pc", existing=True)
    with pytest.raises(TypeError, match="job id must be a str, got int"):
        validate_job_id(17, existing=True)


def test_key_type_refusal_is_one_line_naming_the_valid_choice():
    with pytest.raises(ValueError) as info:
        validate_job_id("meta")
    message = str(info.value)
    assert len(message.splitlines()) == 1 and "key type name" in message and "prioritized" in message


def test_queue_names_refuse_c1_controls_and_lone_surrogates():
    with pytest.raises(ValueError, match=r"'\\x9b'"):
        QueueContext("q\x9b")
    with pytest.raises(ValueError, match="UTF-8"):
        QueueContext("q\udfff")


# -- one wording: the exact one-line messages ---------------------------------------------------

EXACT_REFUSALS = {
    "queue name 5": (lambda: QueueContext(5), TypeError, "queue name must be a str, got int 5"),
    "queue name ''": (lambda: QueueContext(""), ValueError, "queue name must not be empty"),
    "queue name of 101": (lambda: QueueContext("q" * 101), ValueError, "queue name must be 1..100 characters, got 101"),
    "queue name a:b": (lambda: QueueContext("a:b"), ValueError,
                       "queue name must not contain '{', '}', ':', whitespace or control characters "
                       "(the emq:{queue}:type key layout), got ':' in 'a:b'"),
    "prefix with a tab": (lambda: QueueContext("q", "e\tmq"), ValueError,
                          "key prefix must not contain '{', '}', ':', whitespace or control characters "
                          "(the emq:{queue}:type key layout), got '\\t' in 'e\\tmq'"),
    "queue name a lone surrogate": (lambda: QueueContext("q\udfff"), ValueError,
                                    "queue name must be UTF-8 encodable, got str 'q\\udfff' holding the lone "
                                    "surrogate '\\udfff'"),
    "job id 12": (lambda: validate_job_id("12"), ValueError,
                  "custom job id must not be a plain integer (auto ids are), got '12'"),
    "job id pc": (lambda: validate_job_id("pc", existing=True), ValueError,
                  "job id must not be a key type name (prioritized, pc, id, marker, meta, events, wait, active, "
                  "delayed, completed, stalled, limiter, paused: its job hash would be that key), got 'pc'"),
    "job id b'x'": (lambda: validate_job_id(b"x"), TypeError, "job id must be a str, got bytes b'x'"),
    "ctx a str": (lambda: Keys.pc("q"), TypeError, "ctx must be a QueueContext, e.g. QueueContext('orders'), got str 'q'"),
    "key_slot of an int": (lambda: key_slot(5), TypeError, "key must be a str or bytes, got int 5"),
}


@pytest.mark.parametrize("case", EXACT_REFUSALS, ids=list(EXACT_REFUSALS))
def test_every_refusal_is_one_line_in_the_one_wording(case):
    assert_refuses(*EXACT_REFUSALS[case])
