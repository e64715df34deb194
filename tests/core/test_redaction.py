"""Passwords never shown: :func:`echomq_viz.core.redaction.redact_url`, and every
path that prints a Redis URL (connect's errors, the launcher's lines, clean,
the inspector, a private server's refusal), with passwords holding each
character that ends a part of a URL, a space, ``%`` or non-ASCII."""

from __future__ import annotations

import os
import subprocess
import sys
from urllib.parse import quote

import pytest

from echomq_viz.core.redaction import redact_url, url_passwords
from echomq_viz.redis_side.server import RedisServer, RedisUnavailable, connect, free_tcp_port

# Each holds a character that ends a part of a URL, or one a pattern may stop at.
PASSWORDS = [f"Top{char}Secret99" for char in "/#?@:% "] + ["Töp€Secret99"]
IDS = ["slash", "hash", "question", "at", "colon", "percent", "space", "non-ascii"]


def shows_none_of(text: str, password: str) -> bool:
    """Neither half of ``password`` (nor the whole) is in ``text``."""
    return "Secret99" not in text and password[:3] not in text


@pytest.mark.parametrize("password", PASSWORDS, ids=IDS)
@pytest.mark.parametrize("form, shown", [
    ("redis://u:{pw}@127.0.0.1:6379/0", "redis://u:***@127.0.0.1:6379/0"),
    ("redis://:{pw}@h:1/2", "redis://:***@h:1/2"),
    ("rediss://{pw}@h:1", "rediss://***@h:1"),
    ("unix://u:{pw}@/tmp/x/redis.sock?db=0", "unix://u:***@/tmp/x/redis.sock?db=0"),
    ("redis://[::1]:1/0?password={pw}", "redis://[::1]:1/0?password=***"),
    ("cannot reach Redis at redis://u:{pw}@h:1/0: Error 111 connecting to h:1. Connection refused.",
     "cannot reach Redis at redis://u:***@h:1/0: Error 111 connecting to h:1. Connection refused."),
    ("bad Redis URL {pw_repr}: Port could not be cast", "bad Redis URL 'redis://u:***@h:1/0': Port could not be cast"),
    ("two: redis://:{pw}@a:1/0 and redis://:{pw}@b:2/0.", "two: redis://:***@a:1/0 and redis://:***@b:2/0."),
], ids=["url", "no-user", "lone", "unix", "query", "message", "repr", "two"])
def test_every_password_is_hidden_in_every_form(password, form, shown):
    text = form.format(pw=password, pw_repr=repr(f"redis://u:{password}@h:1/0"))
    if "?password=" in form:  # a query password is known only to the caller who has the URL
        assert redact_url(text, [text]) == shown
        assert shows_none_of(redact_url(text, [text]), password)
        return
    if form.startswith("rediss://{pw}") and ":" in password:  # then it is user:password, the user shown
        shown = shown.replace("://", f"://{password.partition(':')[0]}:")
    assert redact_url(text) == shown


@pytest.mark.parametrize("password", PASSWORDS, ids=IDS)
def test_a_known_password_is_hidden_even_without_its_url(password, monkeypatch):
    url = f"redis://u:{quote(password, safe='')}@h:1/0"
    message = f"server said: wrong password {password!r} ({quote(password, safe='')})"
    assert shows_none_of(redact_url(message, [url]), password)
    monkeypatch.setenv("REDIS_URL", url)  # $REDIS_URL's password is always known
    assert shows_none_of(redact_url(message), password)


def test_a_short_known_password_is_hidden_from_four_characters_and_shorter_only_in_its_url():
    """Four characters and more are hidden wherever they stand; a shorter one only where a URL
    holds it ("ab" is in too many words to hide it everywhere)."""
    assert redact_url("wrong password abcd", ["redis://u:abcd@h:1/0"]) == "wrong password ***"
    text = "abc in abcdef, at redis://u:abc@h:1/0"
    assert redact_url(text, ["redis://u:abc@h:1/0"]) == "abc in abcdef, at redis://u:***@h:1/0"


def test_redaction_leaves_what_is_no_password():
    for text in ("unix:///tmp/x/redis.sock?db=0", "redis://127.0.0.1:6379/0", "no URL here, a@b",
                 "redis://h:1/0: deleted emq:{viz-01-score@0a1b2c3d}:wait"):
        assert redact_url(text) == text
    assert url_passwords("redis://u:a%2Fb@h/0?password=c%23d") == {"a%2Fb", "a/b", "c%23d", "c#d"}


# -- connect(): every error names the server, never its password -----------------------------------


@pytest.mark.parametrize("password", PASSWORDS, ids=IDS)
@pytest.mark.parametrize("encoded", [False, True], ids=["as-typed", "percent-encoded"])
def test_connect_errors_hide_any_password(password, encoded, monkeypatch):
    typed = quote(password, safe="") if encoded else password
    url = f"redis://someone:{typed}@127.0.0.1:{free_tcp_port()}/0"
    for given, env in ((url, None), (None, url)):
        if env is None:
            monkeypatch.delenv("REDIS_URL", raising=False)
        else:
            monkeypatch.setenv("REDIS_URL", env)
        with pytest.raises(RedisUnavailable) as info:
            connect(given, timeout=1)
        message = str(info.value)
        assert shows_none_of(message, password) and typed not in message, message
        assert "someone:***@127.0.0.1" in message and len(message.splitlines()) == 1, message


@pytest.mark.parametrize("char, escaped", [("/", "%2F"), ("#", "%23"), ("?", "%3F")])
def test_an_unencoded_character_that_ends_the_host_is_refused_by_name(char, escaped):
    with pytest.raises(RedisUnavailable) as info:
        connect(f"redis://u:Top{char}Secret99@127.0.0.1:1/0", timeout=1)
    message = str(info.value)
    assert message.startswith("bad Redis URL 'redis://u:***@127.0.0.1:1/0'") and escaped in message, message
    assert shows_none_of(message, "Top"), message


@pytest.mark.parametrize("path", ["/abc", "/0/1", "/-1", "/1.5", "/ 1"])
def test_a_database_that_is_not_a_number_is_refused(path):
    with pytest.raises(RedisUnavailable) as info:
        connect(f"redis://127.0.0.1:1{path}", timeout=1)
    message = str(info.value)
    assert "bad Redis URL" in message and "/<database number>" in message and repr(path) in message, message


# -- a real server whose password holds them all ------------------------------------------------------


@pytest.fixture(scope="module")
def odd_password_server():
    """A throwaway server of this module, its password changed to one that
    holds every troublesome character (CONFIG SET, as an admin would)."""
    password = "Top/#?@:% Töp€Secret99"
    with RedisServer(port=0) as server:
        server.client().config_set("requirepass", password)
        yield server, password, f"redis://:{quote(password, safe='')}@127.0.0.1:{server.port}/0"


def test_an_encoded_odd_password_works_and_a_wrong_one_is_refused_unshown(odd_password_server):
    server, password, url = odd_password_server
    client = connect(url)
    assert client.ping()
    client.close()
    wrong = url.replace("Secret99", "Secret98")
    with pytest.raises(RedisUnavailable) as info:
        connect(wrong, timeout=2)
    assert "refused the login" in str(info.value) and shows_none_of(str(info.value), password)


def _launcher(args: list[str], env: dict[str, str], cwd) -> tuple[int, str]:
    env = {**{k: v for k, v in os.environ.items() if k != "REDIS_URL"}, **env, "TMPDIR": str(cwd)}
    done = subprocess.run([sys.executable, "-m", "echomq_viz", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    return done.returncode, done.stdout + done.stderr


def test_clean_never_shows_the_password(odd_password_server, tmp_path):
    server, password, url = odd_password_server
    code, out = _launcher(["clean", "--url", url], {}, tmp_path)
    assert code == 0 and "removed 0 orphaned demo key(s) at redis://:***@127.0.0.1" in out, out
    assert shows_none_of(out, password), out
    as_typed = f"redis://:{password}@127.0.0.1:{server.port}/0"
    code, out = _launcher(["clean", "--url", as_typed], {}, tmp_path)
    assert code == 2 and "bad Redis URL" in out and len(out.strip().splitlines()) == 1, out
    assert shows_none_of(out, password), out


@pytest.mark.slow
def test_the_launchers_lines_never_show_the_password(odd_password_server, tmp_path):
    server, password, url = odd_password_server
    notebooks = tmp_path / "nb"
    notebooks.mkdir()
    # Voila's --help-all: every line the launcher prints before a server starts, then an exit.
    code, out = _launcher(["app", "--no-browser", "--notebooks", str(notebooks), "--help-all"],
                          {"REDIS_URL": url}, tmp_path)
    assert code == 0 and "notebooks use your Redis at redis://:***@127.0.0.1" in out, out[-2000:]
    assert shows_none_of(out, password)


@pytest.mark.parametrize("password", PASSWORDS, ids=IDS)
def test_a_private_server_refuses_an_odd_password_without_showing_it(password):
    with pytest.raises(ValueError) as info:
        RedisServer(port=0, password=password + "-long-enough")
    assert "password must be 16..128 characters" in str(info.value)
    assert shows_none_of(str(info.value), password)


@pytest.mark.parametrize("password", PASSWORDS, ids=IDS)
def test_the_inspector_never_shows_the_password(password, monkeypatch):
    from echomq_viz.widgets import InspectorView

    monkeypatch.delenv("ECHOMQ_VIZ_INSPECT", raising=False)
    view = InspectorView(f"redis://someone:{password}@127.0.0.1:{free_tcp_port()}/0", queue="{q}")
    view._on_run()
    shown = view.status.text + view.figure.status
    assert view.status.text.startswith("error: ") and shows_none_of(shown, password), shown
