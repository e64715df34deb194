"""The package's Lua as one Redis Function library: it holds every script the
package runs (the teaching variants too), each flagged by what it calls; on
Redis 7 the package calls it with FCALL and gets what EVALSHA gives; Redis 6.2
is refused in one line; no call keeps Redis busy past the library's limits."""

from __future__ import annotations

import pytest
import redis

from conftest import one_clear_line, server_binary
from echomq_viz.core.keys import Keys, QueueContext
from echomq_viz.experiments.designs import DESIGNS, design_source
from echomq_viz.experiments.live import past_the_limit_source
from echomq_viz.redis_side import functions, variants
from echomq_viz.redis_side.functions import (
    LIBRARY, MAX_ARG_BYTES, MAX_ARGS, RedisTooOld, ScriptCall, called_commands, function_flags, function_name,
    library_code, load_library, loaded_functions, package_sources,
)
from echomq_viz.redis_side.lua_loader import LUA_DIR, load_scripts
from echomq_viz.redis_side.scripts import Scripts
from echomq_viz.redis_side.server import RedisServer


@pytest.fixture(scope="module")
def seven():
    """A Redis 7 with the library loaded, as an operator sets it up."""
    with RedisServer(server_binary("system")) as server:
        operator = server.client()
        load_library(operator)
        operator.close()
        yield server


@pytest.fixture
def op(seven):
    client = seven.client()
    for key in client.scan_iter(count=1000):
        client.unlink(key)
    yield client
    client.close()


def commands_run(client, command: str) -> int:
    return int(client.info("commandstats").get(f"cmdstat_{command}", {}).get("calls", 0))


# -- what the library holds ---------------------------------------------------------------------


def test_the_library_holds_every_script_and_every_variant_the_package_runs():
    real = {name: script.source for name, script in load_scripts().items()}
    expected = {*real.values(), *(path.read_text() for path in (LUA_DIR / "owners").glob("*.lua")),
                past_the_limit_source(real["addPrioritizedJob"]), variants.packing_source(),
                *(design_source(design, real[design.script]) for design in DESIGNS)}
    assert set(package_sources()) == expected
    assert {(design.file, design.script) for design in DESIGNS} == set(variants.DESIGN_FILES.items())
    code = library_code()
    assert code.startswith(f"#!lua name={LIBRARY}\n")
    for source in expected:
        assert f"function_name = '{function_name(source)}'" in code


def test_each_function_is_named_after_the_sha_evalsha_would_send():
    source = load_scripts()["moveToActive"].source
    import hashlib
    assert function_name(source) == "emq_" + hashlib.sha1(source.encode()).hexdigest()


@pytest.mark.parametrize("command, flags", [
    ("getCountsPerPriority", ("no-writes",)), ("addPrioritizedJob", ()), ("moveToActive", ()),
    ("changePriority", ()),  # it pushes with a command named by a variable: a write
])
def test_a_script_is_flagged_by_what_it_calls(command, flags):
    assert function_flags(load_scripts()[command].source) == flags


def test_a_source_is_read_once_however_many_calls_bind_it():
    """Every Scripts() binds each script anew: its name and flags come from the first reading."""
    source = load_scripts()["addPrioritizedJob"].source + "\n-- a source no other test reads\n"
    first = ScriptCall(None, source)
    scans, hashes = called_commands.cache_info().misses, function_name.cache_info().misses
    half = len(source) // 2
    again = ScriptCall(None, source[:half] + source[half:])  # an equal string, not the same object
    assert (again.name, again.read_only) == (first.name, first.read_only)
    assert (called_commands.cache_info().misses, function_name.cache_info().misses) == (scans, hashes)


@pytest.mark.parametrize("file, flags", [
    ("renewLease-1.lua", ("allow-oom",)), ("unlinkOrphaned-N.lua", ("allow-oom",)), ("takeLease-1.lua", ()),
])
def test_a_lease_is_renewed_and_clean_deletes_on_a_full_server_but_no_lease_is_taken_there(file, flags):
    assert function_flags((LUA_DIR / "owners" / file).read_text()) == flags


# -- FCALL on Redis 7 ---------------------------------------------------------------------------


def test_the_package_calls_the_library_and_gets_what_evalsha_gives(op):
    # The same calls through the library (FCALL) and through EVALSHA, on two queues of one server.
    via_fcall, via_evalsha = QueueContext("q-fcall"), QueueContext("q-evalsha")
    scripts = Scripts(op)
    evalsha = {name: op.register_script(script.source) for name, script in scripts.sources.items()}

    def run(ctx, fcall: bool):
        call = (lambda name, args: scripts.run(name, ctx, args)) if fcall else \
            (lambda name, args: evalsha[name](keys=scripts.sources[name].keys(ctx), args=args))
        base = Keys.base(ctx)
        replies = [call("addPrioritizedJob", [base, "", f"j{n}", 1000 + n, "{}", 1 + n % 3]) for n in range(8)]
        replies.append(call("addStandardJob", [base, "", "w", 2000, "{}"]))
        replies.append(call("changePriority", [2, base, "3", "1"]))
        replies.append(call("moveToActive", [base, 3000, "t", 5000]))
        replies.append(call("retryJob", [base, 3001, "LPUSH", replies[-1][0], "t", "no"]))
        replies.append(call("getCountsPerPriority", [0, 1, 2, 3]))
        return replies

    fcalls, reads = commands_run(op, "fcall"), commands_run(op, "fcall_ro")
    through_library = run(via_fcall, True)
    assert commands_run(op, "fcall") - fcalls == 12 and commands_run(op, "fcall_ro") - reads >= 1
    evalshas, fcalls = commands_run(op, "evalsha"), commands_run(op, "fcall")
    assert through_library == run(via_evalsha, False)
    assert commands_run(op, "evalsha") - evalshas >= 13 and commands_run(op, "fcall") == fcalls
    assert op.zrange(Keys.prioritized(via_fcall), 0, -1, withscores=True) == \
        op.zrange(Keys.prioritized(via_evalsha), 0, -1, withscores=True)


def test_a_bulk_add_and_a_drain_stream_fcalls_without_loading_a_script(op):
    scripts = Scripts(op)
    ctx = QueueContext("q-stream")
    loads = commands_run(op, "script|load")
    ids = scripts.add_prioritized_jobs(ctx, [("j", {}, 1 + n % 4) for n in range(3000)], chunk_size=500)
    assert ids == [str(n) for n in range(1, 3001)]
    assert len(scripts.drain(ctx, "t", batch_size=700)) == 3000
    assert commands_run(op, "script|load") == loads


def test_a_call_refuses_more_than_any_call_of_the_package_sends(op):
    scripts = Scripts(op)
    ctx = QueueContext("q-limits")
    counts = scripts._registered["getCountsPerPriority"]
    keys = scripts.sources["getCountsPerPriority"].keys(ctx)
    assert counts(keys=keys, args=[1] * MAX_ARGS) == [0] * MAX_ARGS
    for args in ([1] * (MAX_ARGS + 1), ["1" * (MAX_ARG_BYTES + 1)]):
        with pytest.raises(redis.ResponseError, match="at most 1001 keys and 4005 arguments") as info:
            counts(keys=keys, args=args)
        assert one_clear_line(str(info.value))


def test_a_library_replaced_by_another_version_is_noticed(op, seven):
    call = ScriptCall(op, load_scripts()["getCountsPerPriority"].source)
    keys = Scripts(op).sources["getCountsPerPriority"].keys(QueueContext("q-swap"))
    assert call.function() == call.name and call(keys=keys, args=[1]) == [0]
    op.execute_command("FUNCTION", "LOAD", "REPLACE",
                       f"#!lua name={LIBRARY}\nredis.register_function{{function_name='echomq_viz_functions', "
                       "callback=function() return {} end, flags={'no-writes'}}\n")
    try:
        assert call(keys=keys, args=[1]) == [0]  # the operator's user: EVALSHA then
        assert call.function() is None
    finally:
        load_library(op)
    assert loaded_functions(op) and call.function() == call.name


def test_redis_6_is_refused_in_one_line_and_nothing_is_loaded():
    with RedisServer(server_binary("bundled")) as server:
        client = server.client()
        with pytest.raises(RedisTooOld, match=r"must be Redis 7\.0 or newer .* runs 6\.2") as info:
            load_library(client)
        assert one_clear_line(str(info.value))
        assert loaded_functions(client) is None
        scripts = Scripts(client)  # the package itself runs there as ever: EVALSHA
        assert scripts.add_prioritized_job(QueueContext("q"), "a", {}, 1) == "1"
        client.close()


def test_a_student_on_a_server_that_lost_the_library_is_told_in_one_line_whom_to_ask(seven):
    from echomq_viz.experiments.live import Demo
    from echomq_viz.redis_side.acl import add_student, remove_student
    from echomq_viz.redis_side.server import connect

    operator = seven.client()
    url = add_student(operator, "lost", seven.url)
    operator.execute_command("FUNCTION", "DELETE", LIBRARY)  # as a Redis restarted empty would have it
    try:
        with pytest.raises(functions.FunctionMissing) as info:
            Demo("viz-lost", client=connect(url))
        assert one_clear_line(str(info.value)) and "`echomq-viz acl add`" in str(info.value)
        assert info.value._render_traceback_() == [f"FunctionMissing: {info.value}"]
    finally:
        load_library(operator)
        remove_student(operator, "lost")
        operator.close()
