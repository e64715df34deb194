"""A Redis user per student, on a real shared Redis: each student's code
works in full on its own queues and gets NOPERM on every other student's
keys and lease (a name that is a prefix of another's included), the
operator's ``clean`` still removes orphans, and ``echomq-viz acl add``
writes the student's URL to a 0600 file without showing it."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import redis

from conftest import one_clear_line
from echomq_viz.redis_side.acl import add_student, remove_student, write_student_url
from echomq_viz.experiments.live import clean_orphans
from echomq_viz.redis_side.demo_keys import key_pattern, lease_key, namespace_of
from echomq_viz.redis_side.server import RedisServer, connect

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from lease import Kernel  # noqa: E402  (a process holding a Demo, driven line by line)


@pytest.fixture(scope="module")
def shared():
    """One Redis with a password, as a course's operator runs it."""
    with RedisServer(port=0) as server:
        yield server


@pytest.fixture
def operator(shared):
    client = shared.client()
    yield client
    for user in client.acl_users():
        if user != "default":
            client.acl_deluser(user)
    client.close()


def left_behind(operator) -> set[str]:
    """Every key but the students' own caps and counts of jobs, which stay with
    their users (remove_student takes them)."""
    return {key for key in operator.scan_iter(count=1000)
            if not key.startswith("emq:caps:") and not re.fullmatch(r"emq:\{viz-@[a-z0-9-]+\.registry\}:queues", key)}


def test_namespaces_never_collide_and_hold_no_glob_or_mark():
    names = ["alice", "Alice", "ali", "a.b", "a-b", "a-2db", "ä", "\u0100", "\u0010" + "0", "x" * 40, "x" * 41,
             "alice@school.org"]
    spaces = [namespace_of(name) for name in names]
    assert len(set(spaces)) == len(names)
    for space in spaces:
        assert set(space) <= set("abcdefghijklmnopqrstuvwxyz0123456789-") and len(space) <= 24


@pytest.mark.slow  # a process or a server of its own: a second or more
def test_each_student_works_in_full_and_never_reaches_another(shared, operator):
    urls = {name: add_student(operator, name, shared.url) for name in ("alice", "ali", "bob")}
    kernels = {name: Kernel(url, lease=30, name="viz-01-score") for name, url in urls.items()}
    try:
        for name, kernel in kernels.items():
            assert kernel.token.startswith(namespace_of(name) + ".")
            assert kernel.ask("add 3") == ["1", "2", "3"]
            state = kernel.ask("state")
            assert state["ids"] == ["1", "2", "3"] and state["hashes"] == 3
        alice = connect(urls["alice"])
        for victim in ("ali", "bob"):  # "ali" is a prefix of "alice": still out of reach
            queue = kernels[victim].queue
            keys = [f"emq:{{{queue}}}:1", f"emq:{{{queue}}}:prioritized", lease_key(kernels[victim].token)]
            for attack in (lambda key: alice.hgetall(key), lambda key: alice.hset(key, "data", "{}"),
                           lambda key: alice.delete(key), lambda key: alice.unlink(key),
                           lambda key: alice.get(key), lambda key: alice.pexpire(key, 1),
                           lambda key: alice.rename(key, f"emq:{{viz-x@alice.00000000}}:stolen"),
                           lambda key: alice.eval("return redis.call('DEL', KEYS[1])", 1, key)):
                for key in keys:
                    with pytest.raises(redis.exceptions.NoPermissionError):
                        attack(key)
        for command in (("FLUSHALL",), ("KEYS", "*"), ("CONFIG", "SET", "maxmemory", "1"), ("SCRIPT", "FLUSH"),
                        ("ACL", "SETUSER", "alice", "~*"), ("SUBSCRIBE", "x"), ("DEBUG", "SLEEP", "0")):
            with pytest.raises(redis.exceptions.ResponseError):
                alice.execute_command(*command)
        alice.close()
        for name, kernel in kernels.items():  # nothing of theirs changed
            assert kernel.ask("state")["hashes"] == 3
            assert kernel.ask("add 1") == ["4"]
    finally:
        for kernel in kernels.values():
            kernel.__exit__()
    assert left_behind(operator) == set()  # each kernel took its own keys and lease with it


def test_a_students_demo_in_this_process_covers_every_call(shared, operator):
    # The whole Demo API through one student's user: nothing the package does needs more rights.
    url = add_student(operator, "carol", shared.url)
    code = (
        "from echomq_viz.experiments.live import Demo\nfrom echomq_viz.redis_side.server import connect\n"
        "d = Demo('viz-all', client=connect(URL))\n"
        "print(d.compare((1, 7), (2, 1)).popped, d.reset() >= 0)\n"
        "d.add_at_counter('a', 3, 5); d.add('b', 2); d.add_waiting('w'); d.add_batch([1, 1]); d.set_counter(9)\n"
        "print([e.job_id for e in d.entries()], d.waiting(), d.priority_counter(), d.counts([1, 2, 3]))\n"
        "print(d.add_past_the_limit_for_teaching('big', 2**22)[0], d.pop().id, len(d.drain()))\n"
        "print(d.queue)\n"
    )
    result = subprocess.run([sys.executable, "-c", code.replace("URL", repr(url))], capture_output=True,
                            text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.splitlines()
    assert lines[0] == "A True"
    assert lines[1] == "['4', '5', '2', '1'] ['3'] 9 {1: 2, 2: 1, 3: 1}"
    assert lines[3].startswith("viz-all@carol.")


def test_clean_with_the_operators_url_removes_orphans_of_students_and_keeps_the_living(shared, operator):
    url = add_student(operator, "dave", shared.url)
    orphan = f"emq:{{viz-01-score@{namespace_of('erin')}.0badc0de}}:wait"  # a killed kernel's key
    own_orphan = f"emq:{{viz-01-score@{namespace_of('dave')}.0badc0de}}:wait"  # dave's kernel killed before
    operator.rpush(orphan, "1")
    operator.rpush(own_orphan, "1")
    with Kernel(url, lease=30, name="viz-01-score") as kernel:
        kernel.ask("add 2")
        student = connect(url)
        assert clean_orphans(student) == 1  # a student's start cleans only what its own dead kernels left
        student.close()
        assert not operator.exists(own_orphan) and operator.exists(orphan)
        assert clean_orphans(operator) == 1
        assert not operator.exists(orphan) and kernel.ask("state")["hashes"] == 2


def test_the_key_pattern_matches_only_its_own_namespace(shared, operator):
    pattern = key_pattern(namespace_of("ali"))
    assert pattern == "emq:{viz-*@ali.????????}:*"
    # Redis's own glob decides: the pattern is what the ACL uses.
    for key, own in ((f"emq:{{viz-x@ali.0123abcd}}:wait", True), (lease_key("ali.0123abcd"), True),
                     (f"emq:{{viz-x@alice.0123abcd}}:wait", False), (f"emq:{{viz-x@xali.0123abcd}}:wait", False),
                     (f"emq:{{viz-ali.0123abcd@bob.0123abcd}}:wait", False), ("emq:{orders}:wait", False)):
        operator.set(key, "1")
        assert (key in operator.keys(pattern)) is own, key
        operator.delete(key)


def test_a_new_password_replaces_the_old_and_remove_student_ends_the_user(shared, operator):
    first = add_student(operator, "frank", shared.url)
    second = add_student(operator, "frank", shared.url)
    assert first != second
    with pytest.raises(Exception, match="refused the login"):
        connect(first)
    connect(second).close()
    assert remove_student(operator, "frank") and not remove_student(operator, "frank")


@pytest.mark.parametrize("name, message", [
    ("default", "must not be 'default'"), ("two words", "without spaces"), ("", "must not be empty"), ("x" * 129, "1..128"),
])
def test_a_bad_student_name_is_one_line_and_no_user_is_made(shared, operator, name, message):
    before = operator.acl_users()
    with pytest.raises(ValueError, match=message) as info:
        add_student(operator, name, shared.url)
    assert one_clear_line(str(info.value)) and operator.acl_users() == before


def test_acl_add_writes_the_url_to_a_0600_file_and_never_shows_it(shared, operator, tmp_path):
    out = tmp_path / "grace.env"
    env = {**os.environ, "REDIS_URL": shared.url, "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-m", "echomq_viz", "acl", "add", "grace", "--out", str(out)],
                            capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 0, result.stderr
    url = out.read_text().strip()
    password = url.split("@")[0].rsplit(":", 1)[1]
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert password not in result.stdout + result.stderr and shared.password not in result.stdout + result.stderr
    assert str(out) in result.stdout and len(result.stdout.splitlines()) == 1
    client = connect(url)
    assert client.execute_command("ACL", "WHOAMI") == "grace"
    client.close()
    # the file is replaced, never written through a link someone else left
    again = subprocess.run([sys.executable, "-m", "echomq_viz", "acl", "add", "grace", "--out", str(out)],
                           capture_output=True, text=True, timeout=60, env=env)
    assert again.returncode == 0 and out.read_text().strip() != url
    assert not [path for path in tmp_path.iterdir() if path.name.endswith(".part")]


def test_acl_add_writes_the_caps_it_is_given_and_refuses_caps_that_disagree(shared, operator, tmp_path):
    from echomq_viz.redis_side.caps import JobCaps, read_caps
    from echomq_viz.redis_side.demo_keys import namespace_of

    env = {**os.environ, "REDIS_URL": shared.url, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "echomq_viz", "acl", "add", "judy", "--out", str(tmp_path / "judy.env")]
    result = subprocess.run([*command, "--max-queue-jobs", "300", "--max-jobs", "900"], capture_output=True,
                            text=True, timeout=60, env=env)
    assert result.returncode == 0, result.stderr
    assert "within 300 jobs a queue, 900 a student" in result.stdout
    assert read_caps(operator, namespace=namespace_of("judy")) == JobCaps(queue_jobs=300, student_jobs=900)
    before = operator.acl_users()
    refused = subprocess.run([*command, "--max-queue-jobs", "300", "--max-jobs", "10"], capture_output=True,
                             text=True, timeout=60, env=env)
    assert refused.returncode == 2 and "student_jobs must be at least queue_jobs (300)" in refused.stderr
    assert refused.stderr.strip().splitlines()[-1].startswith("echomq-viz acl: error: argument --max-queue-jobs")
    assert operator.acl_users() == before  # nothing written
    assert read_caps(operator, namespace=namespace_of("judy")) == JobCaps(queue_jobs=300, student_jobs=900)


def test_acl_add_to_a_folder_that_does_not_exist_is_one_line_and_changes_nothing(shared, operator, tmp_path):
    env = {**os.environ, "REDIS_URL": shared.url, "PYTHONPATH": str(ROOT)}
    before = operator.acl_users()
    result = subprocess.run([sys.executable, "-m", "echomq_viz", "acl", "add", "heidi", "--out",
                             str(tmp_path / "no" / "such.env")], capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode != 0 and one_clear_line(result.stderr.strip())
    assert "does not exist" in result.stderr and operator.acl_users() == before


def test_acl_add_where_the_file_cannot_be_written_is_one_line_and_changes_nothing(shared, operator, tmp_path):
    """The URL's file was opened after Redis was changed: a new user was made, an old one's
    password replaced (its URL dead), and the command then failed."""
    kept = write_student_url(shared.url, "kim", tmp_path / "kim.env").read_text().strip()
    before = operator.acl_users()
    for name in ("kim", "lee"):  # one already there, one new; /proc takes no new file, even from root
        with pytest.raises(ValueError, match=r"^--out must be in a folder you can write in, got /proc/x\.env \(") as info:
            write_student_url(shared.url, name, "/proc/x.env")
        assert one_clear_line(str(info.value))
    assert operator.acl_users() == before
    client = connect(kept)  # the URL handed out before still works
    assert client.execute_command("ACL", "WHOAMI") == "kim"
    client.close()


def test_write_student_url_for_a_spawner(shared, operator, tmp_path):
    path = write_student_url(shared.url, "ivan", tmp_path / "ivan.env")
    client = connect(path.read_text().strip())
    assert client.execute_command("ACL", "WHOAMI") == "ivan"
    client.close()


# -- the notebooks, one Redis user per student ------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("name", ["01-one-score-two-keys", "03-inside-the-consume", "05-where-exactness-ends"])
def test_each_students_notebook_runs_in_full_on_their_own_user_at_once(name, shared, operator, tmp_path):
    import asyncio
    import contextlib
    import re

    import nbformat
    from nbclient import NotebookClient

    from echomq_viz.launcher._kernel_channels import private_kernel_config
    from test_notebooks_shared import printed, sanitizers

    urls = {student: add_student(operator, student, shared.url) for student in ("alice", "ali")}
    path = ROOT / "notebooks" / f"{name}.ipynb"
    rules = sanitizers()
    stored = printed(nbformat.read(path, as_version=4), rules)
    assert any(stored), "the stored notebook prints nothing: nothing would be compared"

    async def run_all() -> dict:
        notebooks = {student: nbformat.read(path, as_version=4) for student in urls}
        env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
        with contextlib.ExitStack() as folders:  # a kernel's channels on Unix sockets in a folder of its own
            await asyncio.gather(*(
                NotebookClient(nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}},
                               config=folders.enter_context(private_kernel_config()))
                .async_execute(env={**env, "REDIS_URL": urls[student]}) for student, nb in notebooks.items()))
        return notebooks

    def scripts_run() -> int:  # the library's functions: a student may run no script of its own
        return int(operator.info("commandstats").get("cmdstat_fcall", {}).get("calls", 0))

    before = scripts_run()
    ran = asyncio.run(run_all())
    assert scripts_run() > before, "the kernels did not use the shared Redis"
    for student, nb in ran.items():
        own = re.compile(rf"@{namespace_of(student)}\.(?=[0-9a-f]{{8}})")  # the namespace; the token as before
        for cell in nb.cells:
            for output in cell.get("outputs", []):
                if "text" in output:
                    output.text = own.sub("@", output.text)
                for kind, value in output.get("data", {}).items():
                    if kind == "text/plain":
                        output.data[kind] = own.sub("@", value)
        assert printed(nb, rules) == stored, student
    # Both kernels ended: their demo keys and leases went with them, through their own users.
    assert left_behind(operator) == set()


def test_a_student_may_write_with_exactly_the_commands_the_library_calls():
    # Redis checks each command a function calls against the caller's rights: every one must be
    # granted, and nothing more (RPUSH: the push a script names by a variable, checkPushCmd's other one).
    from echomq_viz.redis_side import functions
    from echomq_viz.redis_side.acl import SELECTED_WRITES, STUDENT_WRITES

    called = set()
    for source in functions.package_sources():
        called |= functions.called_commands(source)[0]
    writes = called - functions._READS
    assert {command.upper() for command in [*STUDENT_WRITES, *SELECTED_WRITES]} == writes | {"RPUSH"}
    assert all(why.strip() for why in STUDENT_WRITES.values())
