# Tests of the Lua include resolver and script loader (echomq_viz.redis_side.lua_loader);
# no Redis. Small fixture trees are written to tmp_path; the last section
# checks the real scripts in lua/.

from __future__ import annotations

import re
from pathlib import Path

import pytest

from echomq_viz.core.keys import FORMAT_CHARACTERS, KEY_TYPES, Keys, QueueContext
from echomq_viz.redis_side.lua_loader import LUA_DIR, LuaIncludeError, load_scripts, resolve_includes
from echomq_viz.core.score import MAX_PRIORITY_COUNTER

FUNCTION_DEF = re.compile(r"^local function (\w+)\(", re.M)


def lua(root: Path, rel: str, *body: str, header: str = "test fixture") -> Path:
    # Write a Lua file that opens with the mandatory --[[ ]] header.
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"--[[\n  {header}\n]]\n" + "".join(line + "\n" for line in body), encoding="utf-8")
    return path


def inc(name: str) -> str:
    return f'--- @include "{name}"'


def func(name: str) -> str:
    return f"local function {name}() return '{name}' end"


# -- inlining ----------------------------------------------------------------------------


def test_file_without_includes_is_unchanged(tmp_path):
    main = lua(tmp_path, "main.lua", "local x = 1", "return x")
    assert resolve_includes(main) == main.read_text()


def test_include_is_inlined_where_the_directive_stands(tmp_path):
    lua(tmp_path, "includes/helper.lua", func("helper"))
    main = lua(tmp_path, "main.lua", "local before = 1", inc("includes/helper"), "local after = helper()")
    out = resolve_includes(main)
    assert "@include" not in out
    assert out.index("local before = 1") < out.index(func("helper")) < out.index("local after = helper()")
    # The directive line is replaced by the include's whole text, header included.
    helper_text = (tmp_path / "includes/helper.lua").read_text()
    assert helper_text.rstrip("\n") in out
    assert out.count("local function helper") == 1


def test_lua_suffix_is_appended(tmp_path):
    lua(tmp_path, "includes/helper.lua", func("helper"))
    ok = lua(tmp_path, "ok.lua", inc("includes/helper"))
    assert func("helper") in resolve_includes(ok)
    # Naming the suffix yourself looks for helper.lua.lua, which does not exist.
    doubled = lua(tmp_path, "doubled.lua", inc("includes/helper.lua"))
    with pytest.raises(LuaIncludeError, match="missing"):
        resolve_includes(doubled)


def test_directive_with_leading_space_still_counts(tmp_path):
    lua(tmp_path, "includes/helper.lua", func("helper"))
    main = lua(tmp_path, "main.lua", '  ---  @include   "includes/helper"  ')
    out = resolve_includes(main)
    assert func("helper") in out and "@include" not in out


def test_include_resolves_relative_to_including_file(tmp_path):
    # includes/a.lua names "sub/x": that is includes/sub/x.lua, not <root>/sub/x.lua.
    lua(tmp_path, "includes/sub/x.lua", func("nestedX"))
    lua(tmp_path, "sub/x.lua", func("decoyX"))
    lua(tmp_path, "includes/a.lua", inc("sub/x"), func("a"))
    main = lua(tmp_path, "main.lua", inc("includes/a"))
    out = resolve_includes(main)
    assert func("nestedX") in out
    assert "decoyX" not in out
    assert out.index(func("nestedX")) < out.index(func("a"))


def test_diamond_emits_shared_include_once_before_first_use(tmp_path):
    lua(tmp_path, "includes/d.lua", func("d"))
    lua(tmp_path, "includes/b.lua", inc("d"), "local function b() return d() end")
    lua(tmp_path, "includes/c.lua", inc("d"), "local function c() return d() end")
    main = lua(tmp_path, "main.lua", inc("includes/b"), inc("includes/c"), "return b() .. c()")
    out = resolve_includes(main)
    assert out.count("local function d(") == 1
    assert out.index("local function d(") < out.index("local function b(") < out.index("local function c(")
    assert out.index("local function d(") < out.index("return d()")
    assert "@include" not in out


def test_shared_include_used_first_by_main_then_by_include(tmp_path):
    lua(tmp_path, "includes/d.lua", func("d"))
    lua(tmp_path, "includes/b.lua", inc("d"), "local function b() return d() end")
    main = lua(tmp_path, "main.lua", inc("includes/d"), inc("includes/b"))
    out = resolve_includes(main)
    assert out.count("local function d(") == 1
    assert out.index("local function d(") < out.index("local function b(")


# -- errors -------------------------------------------------------------------------------


def test_missing_include_names_it_and_the_chain(tmp_path):
    lua(tmp_path, "includes/a.lua", inc("nowhere"), func("a"))
    main = lua(tmp_path, "main.lua", inc("includes/a"))
    with pytest.raises(LuaIncludeError) as info:
        resolve_includes(main)
    msg = str(info.value)
    assert "nowhere" in msg
    assert "main.lua -> includes/a.lua" in msg


def test_missing_include_in_main_file(tmp_path):
    main = lua(tmp_path, "main.lua", "local x = 1", inc("includes/ghost"))
    with pytest.raises(LuaIncludeError, match=r"includes/ghost.*main\.lua:5"):
        resolve_includes(main)


def test_circular_include_names_the_cycle(tmp_path):
    a = lua(tmp_path, "a.lua", inc("b"), func("a"))
    lua(tmp_path, "b.lua", inc("a"), func("b"))
    with pytest.raises(LuaIncludeError, match="circular") as info:
        resolve_includes(a)
    assert "a.lua -> b.lua -> a.lua" in str(info.value)


def test_longer_cycle_among_includes(tmp_path):
    lua(tmp_path, "includes/a.lua", inc("b"), func("a"))
    lua(tmp_path, "includes/b.lua", inc("c"), func("b"))
    lua(tmp_path, "includes/c.lua", inc("a"), func("c"))
    main = lua(tmp_path, "main.lua", inc("includes/a"))
    with pytest.raises(LuaIncludeError, match="circular") as info:
        resolve_includes(main)
    assert "includes/a.lua -> includes/b.lua -> includes/c.lua -> includes/a.lua" in str(info.value)


def test_self_include_is_circular(tmp_path):
    # The smallest cycle: includes/a.lua names itself.
    lua(tmp_path, "includes/a.lua", inc("a"), func("a"))
    main = lua(tmp_path, "main.lua", inc("includes/a"))
    with pytest.raises(LuaIncludeError, match="circular"):
        resolve_includes(main)


def test_script_including_itself_is_circular(tmp_path):
    main = lua(tmp_path, "main.lua", inc("main"))
    with pytest.raises(LuaIncludeError, match="circular"):
        resolve_includes(main)


def test_same_include_twice_in_one_file_is_repeated(tmp_path):
    lua(tmp_path, "includes/helper.lua", func("helper"))
    main = lua(tmp_path, "main.lua", inc("includes/helper"), "local x = 1", inc("includes/helper"))
    with pytest.raises(LuaIncludeError, match="repeated") as info:
        resolve_includes(main)
    assert "includes/helper" in str(info.value)


def test_same_include_twice_via_different_spelling_is_repeated(tmp_path):
    lua(tmp_path, "includes/helper.lua", func("helper"))
    main = lua(tmp_path, "main.lua", inc("includes/helper"), inc("includes/../includes/helper"))
    with pytest.raises(LuaIncludeError, match="repeated"):
        resolve_includes(main)


def test_script_without_header_is_refused(tmp_path):
    main = tmp_path / "main.lua"
    main.write_text("local x = 1\nreturn x\n")
    with pytest.raises(LuaIncludeError, match="header") as info:
        resolve_includes(main)
    assert "main.lua" in str(info.value)


def test_header_must_open_the_file(tmp_path):
    main = tmp_path / "main.lua"
    main.write_text("\n--[[\n  late header\n]]\nreturn 1\n")
    with pytest.raises(LuaIncludeError, match="header"):
        resolve_includes(main)


def test_include_without_header_is_refused(tmp_path):
    (tmp_path / "includes").mkdir()
    (tmp_path / "includes/bare.lua").write_text(func("bare") + "\n")
    main = lua(tmp_path, "main.lua", inc("includes/bare"))
    with pytest.raises(LuaIncludeError, match="header") as info:
        resolve_includes(main)
    assert "bare.lua" in str(info.value)


def test_include_escaping_the_root_is_refused(tmp_path):
    root = tmp_path / "lua"
    lua(tmp_path, "outside.lua", func("outside"))
    main = lua(root, "main.lua", inc("../outside"))
    with pytest.raises(LuaIncludeError, match="leaves"):
        resolve_includes(main)


def test_nested_include_escaping_an_explicit_root_is_refused(tmp_path):
    root = tmp_path / "lua"
    lua(tmp_path, "outside.lua", func("outside"))
    lua(root, "includes/a.lua", inc("../../outside"), func("a"))
    main = lua(root, "main.lua", inc("includes/a"))
    with pytest.raises(LuaIncludeError, match="leaves"):
        resolve_includes(main, root)


# -- load_scripts on fixture directories --------------------------------------------


def test_load_scripts_reads_name_and_key_count(tmp_path):
    lua(tmp_path, "includes/helper.lua", func("helper"))
    lua(tmp_path, "doThing-2.lua", inc("includes/helper"), "return helper()",
        header="KEYS[1] 'wait'\n  KEYS[2] 'pc'")
    scripts = load_scripts(tmp_path)
    assert set(scripts) == {"doThing"}
    script = scripts["doThing"]
    assert script.command == "doThing"
    assert script.number_of_keys == 2
    assert script.key_types == ("wait", "pc")
    assert script.keys(QueueContext("q")) == ["emq:{q}:wait", "emq:{q}:pc"]
    assert script.file_name == "doThing-2.lua"
    assert func("helper") in script.source and "@include" not in script.source


def test_load_scripts_reassembles_after_any_edit_and_reuses_an_unchanged_set(tmp_path):
    helper = lua(tmp_path, "includes/helper.lua", func("helper"))
    lua(tmp_path, "doThing-1.lua", inc("includes/helper"), "return helper()", header="KEYS[1] 'wait'")
    first = load_scripts(tmp_path)
    again = load_scripts(tmp_path)
    assert again == first and again is not first  # the caller's dict is its own
    again.clear()
    assert set(load_scripts(tmp_path)) == {"doThing"}

    helper.write_text(helper.read_text().replace("'helper'", "'edited'"))  # same size, same second
    assert "return 'edited'" in load_scripts(tmp_path)["doThing"].source
    lua(tmp_path, "doOther-1.lua", "return 2", header="KEYS[1] 'pc'")
    assert set(load_scripts(tmp_path)) == {"doThing", "doOther"}
    helper.unlink()
    with pytest.raises(LuaIncludeError, match="missing include 'includes/helper'"):
        load_scripts(tmp_path)


def test_load_scripts_gives_paths_under_the_folder_as_named(tmp_path, monkeypatch):
    lua(tmp_path / "set", "doThing-1.lua", "return 1", header="KEYS[1] 'wait'")
    monkeypatch.chdir(tmp_path)
    assert load_scripts("set")["doThing"].path == Path("set/doThing-1.lua")
    assert load_scripts(tmp_path / "set")["doThing"].path == tmp_path / "set" / "doThing-1.lua"


@pytest.mark.parametrize("name", ["badname.lua", "foo.lua", "Foo-1.lua", "foo-x.lua", "foo_bar-1.lua"])
def test_load_scripts_refuses_bad_file_names(tmp_path, name):
    lua(tmp_path, name, "return 1", header="KEYS[1] 'wait'")
    with pytest.raises(LuaIncludeError, match=re.escape(name)):
        load_scripts(tmp_path)


@pytest.mark.parametrize("name, body, header, listed", [
    ("foo-3.lua", "return 1", "KEYS[1] 'wait'\n  KEYS[2] 'pc'", "[1, 2]"),
    ("foo-3.lua", "return 1", "KEYS[1] 'wait'\n  KEYS[3] 'pc'\n  KEYS[4] 'id'", "[1, 3, 4]"),
    # only the header is the contract: a KEYS[2] in the body does not count
    ("foo-2.lua", "return KEYS[2]", "KEYS[1] 'wait'", "[1]"),
    # the header order is the KEYS order callers must follow, so it must read 1..N
    ("foo-2.lua", "return 1", "KEYS[2] 'pc'\n  KEYS[1] 'wait'", "[2, 1]"),
], ids=["too few", "a gap", "a key only in the body", "out of order"])
def test_load_scripts_refuses_a_header_that_breaks_the_names_promise(tmp_path, name, body, header, listed):
    lua(tmp_path, name, body, header=header)
    with pytest.raises(LuaIncludeError) as info:
        load_scripts(tmp_path)
    assert str(info.value) == f"{name}: header lists KEYS {listed}, the name promises KEYS[1]..KEYS[{name[4]}]"


def test_load_scripts_refuses_unknown_key_type(tmp_path):
    # A header key type that Keys cannot build would make a script uncallable.
    lua(tmp_path, "foo-2.lua", "return 1", header="KEYS[1] 'wait'\n  KEYS[2] 'nosuchkey'")
    with pytest.raises(LuaIncludeError, match="nosuchkey"):
        load_scripts(tmp_path)


def test_load_scripts_refuses_script_without_header(tmp_path):
    (tmp_path / "foo-1.lua").write_text("return KEYS[1]\n")
    with pytest.raises(LuaIncludeError, match="header"):
        load_scripts(tmp_path)


# -- the real scripts ------------------------------------------------------------------

EXPECTED_SCRIPTS = {
    "addPrioritizedJob": 9,
    "addStandardJob": 9,
    "moveToActive": 11,
    "changePriority": 7,
    "getCountsPerPriority": 2,
    "addDelayedJob": 6,
    "promote": 9,
    "retryJob": 10,
}
INCLUDES_DIR = LUA_DIR / "includes"
INCLUDE_FILES = sorted(INCLUDES_DIR.glob("*.lua"))


@pytest.fixture(scope="module")
def real_scripts():
    return load_scripts()


def test_real_scripts_and_key_counts(real_scripts):
    assert {name: s.number_of_keys for name, s in real_scripts.items()} == EXPECTED_SCRIPTS
    for name, script in real_scripts.items():
        assert script.file_name == f"{name}-{EXPECTED_SCRIPTS[name]}.lua"


# KEYS orders of the BullMQ protocol (addStandardJob follows BullMQ's addStandardJob-9).
PROTOCOL_KEY_ORDER = {
    "addPrioritizedJob": ("marker", "meta", "id", "prioritized", "delayed", "completed",
                          "active", "events", "pc"),
    "addStandardJob": ("wait", "paused", "meta", "id", "completed", "delayed", "active",
                       "events", "marker"),
    "moveToActive": ("wait", "active", "prioritized", "events", "stalled", "limiter",
                     "delayed", "paused", "meta", "pc", "marker"),
    "changePriority": ("wait", "paused", "meta", "prioritized", "active", "pc", "marker"),
    "getCountsPerPriority": ("wait", "prioritized"),
    # BullMQ's addDelayedJob-6 and promote-9; retryJob-11 without its KEYS[4], the job hash.
    "addDelayedJob": ("marker", "meta", "id", "delayed", "completed", "events"),
    "promote": ("delayed", "wait", "paused", "meta", "prioritized", "active", "pc", "events", "marker"),
    "retryJob": ("active", "wait", "paused", "meta", "events", "delayed", "prioritized", "pc", "marker",
                 "stalled"),
}


@pytest.mark.parametrize("name", sorted(EXPECTED_SCRIPTS))
def test_real_script_key_order_matches_protocol(real_scripts, name):
    script = real_scripts[name]
    assert script.key_types == PROTOCOL_KEY_ORDER[name]
    q = QueueContext("q")
    assert script.keys(q) == [getattr(Keys, t)(q) for t in PROTOCOL_KEY_ORDER[name]]
    # KEYS[9] of addPrioritizedJob is the priority counter, as the seed says.
    if name == "addPrioritizedJob":
        assert script.keys(q)[8] == "emq:{q}:pc"


def test_no_directive_survives_assembly(real_scripts):
    for name, script in real_scripts.items():
        assert "@include" not in script.source, name


@pytest.mark.parametrize("name", ["addPrioritizedJob", "changePriority"])
def test_scoring_scripts_inline_get_priority_score_once(real_scripts, name):
    source = real_scripts[name].source
    body = (INCLUDES_DIR / "getPriorityScore.lua").read_text().rstrip("\n")
    assert source.count("local function getPriorityScore") == 1
    assert source.count(body) == 1
    # Defined before it is called.
    assert source.index("local function getPriorityScore(") < source.index("= getPriorityScore(")


def test_only_scoring_scripts_call_get_priority_score(real_scripts):
    callers = {n for n, s in real_scripts.items() if "getPriorityScore(" in s.source}
    assert callers == {"addPrioritizedJob", "changePriority", "moveToActive", "promote", "retryJob"}


def test_every_called_include_function_is_defined_once_before_use(real_scripts):
    include_names = {p.stem for p in INCLUDE_FILES}
    for name, script in real_scripts.items():
        source = script.source
        defined = FUNCTION_DEF.findall(source)
        assert len(defined) == len(set(defined)), (name, defined)
        for fn in include_names:
            calls = [m.start() for m in re.finditer(rf"(?<![\w.]){fn}\(", source)]
            uses = [pos for pos in calls if not source[max(0, pos - 15):pos].endswith("local function ")]
            if uses:
                assert fn in defined, (name, fn)
                assert source.index(f"local function {fn}(") < min(uses), (name, fn)


def test_include_dir_is_not_empty():
    assert "getPriorityScore" in {p.stem for p in INCLUDE_FILES}
    assert len(INCLUDE_FILES) >= 2


@pytest.mark.parametrize("path", INCLUDE_FILES, ids=lambda p: p.name)
def test_one_function_per_include_named_after_file(path):
    text = path.read_text()
    assert text.startswith("--[[")
    assert FUNCTION_DEF.findall(text) == [path.stem]
    assert len(re.findall(r"\bfunction\b", text)) == 1


def test_get_priority_score_is_the_protocol_formula():
    text = (INCLUDES_DIR / "getPriorityScore.lua").read_text()
    assert text.count("priority * 0x100000000 + prioCounter % 0x100000000") == 1
    assert re.search(r'rcall\("INCR", priorityCounterKey\)', text)


def test_lua_priority_limit_matches_python():
    # Lua and Python must refuse the same priorities: 2**21 - 1 on both sides.
    from echomq_viz.core.score import PRIORITY_LIMIT

    text = (INCLUDES_DIR / "checkPriority.lua").read_text()
    match = re.search(r"local MAX_PRIORITY = (\d+)", text)
    assert match and int(match.group(1)) == 2**21 - 1 == PRIORITY_LIMIT


@pytest.mark.parametrize("path", sorted(LUA_DIR.glob("*.lua")), ids=lambda p: p.name)
def test_each_real_script_resolves_on_its_own(path):
    # resolve_includes with the script's own directory as root gives the loader's source.
    assert resolve_includes(path) == load_scripts()[path.name.split("-")[0]].source


# -- the checks every script shares ------------------------------------------------------

CHECK_KEYS_CALL = re.compile(r"checkKeys\([^,]+,\s*\{(?P<types>[^}]*)\}\)")


@pytest.mark.parametrize("name", sorted(EXPECTED_SCRIPTS))
def test_every_script_checks_its_keys_against_its_header(real_scripts, name):
    # The list checkKeys holds each KEYS position to is the header's contract.
    script = real_scripts[name]
    own_text = script.path.read_text()
    calls = CHECK_KEYS_CALL.findall(own_text)
    assert len(calls) == 1, name
    assert tuple(re.findall(r'"(\w+)"', calls[0])) == script.key_types
    # ... and the check comes before any write the script itself makes.
    first_write = re.search(r'rcall\("(INCR|HSET|ZADD|LPUSH|RPOPLPUSH|ZPOPMIN|DEL|ZREM|LREM|SET|XADD)"|'
                            r"(nextJobId|storeJob|addJobWithPriority|emitEvent)\(", own_text)
    assert first_write is None or own_text.index("checkKeys(") < first_write.start(), name


def test_job_id_rule_in_lua_names_every_key_type():
    text = (INCLUDES_DIR / "checkJobId.lua").read_text()
    table = re.search(r"local KEY_TYPE_NAMES = \{(?P<body>[^}]*)\}", text)
    assert table and sorted(re.findall(r"(\w+) = true", table.group("body"))) == sorted(KEY_TYPES)


def test_job_id_rule_in_lua_has_pythons_format_characters():
    text = (INCLUDES_DIR / "checkJobId.lua").read_text()
    table = re.search(r"local FORMAT_CHARACTERS = \{(?P<body>.*?)\n\}", text, re.DOTALL)
    pairs = re.findall(r"\{0x([0-9A-F]+), 0x([0-9A-F]+)\}", table.group("body")) if table else []
    assert tuple((int(low, 16), int(high, 16)) for low, high in pairs) == FORMAT_CHARACTERS


def test_lua_priority_counter_bound_matches_python():
    text = (INCLUDES_DIR / "checkPriorityCounter.lua").read_text()
    match = re.search(r"local MAX_PRIORITY_COUNTER = (\d+)", text)
    assert match and int(match.group(1)) == MAX_PRIORITY_COUNTER == 2**53 - 2


def test_events_are_written_in_one_place():
    # MAXLEN ~ 10000 lives in emitEvent alone; every script and include goes through it.
    holders = [p.relative_to(LUA_DIR) for p in sorted(LUA_DIR.rglob("*.lua")) if "XADD" in p.read_text()]
    assert [str(p) for p in holders] == ["includes/emitEvent.lua"]
    assert sum(p.read_text().count("MAXLEN") for p in LUA_DIR.rglob("*.lua")) == 1


@pytest.mark.parametrize("check", ["checkNotEmpty", "checkLockDuration", "checkLifo", "checkJobId"])
def test_argument_checks_are_includes_not_inline(real_scripts, check):
    users = {name for name, script in real_scripts.items() if f"{check}(" in script.path.read_text()}
    assert users, check
    for name in users:
        assert real_scripts[name].source.count(f"local function {check}(") == 1


# -- the include graph (include_graph, includers_of) ---------------------------------------------


def test_include_graph_names_files_and_their_direct_includes(tmp_path):
    from echomq_viz.redis_side.lua_loader import include_graph

    lua(tmp_path, "includes/sub/x.lua", func("x"))
    lua(tmp_path, "includes/a.lua", inc("sub/x"), func("a"))  # relative to includes/
    lua(tmp_path, "includes/b.lua", func("b"))
    lua(tmp_path, "doThing-1.lua", inc("includes/a"), "return a()", header="KEYS[1] 'wait'")
    assert include_graph(tmp_path) == {
        "doThing-1": {"includes/a"},
        "includes/a": {"includes/sub/x"},
        "includes/b": set(),
        "includes/sub/x": set(),
    }


def test_includers_of_follows_chains_and_stops_on_cycles(tmp_path):
    from echomq_viz.redis_side.lua_loader import include_graph, includers_of

    lua(tmp_path, "includes/d.lua", func("d"))
    lua(tmp_path, "includes/b.lua", inc("d"), func("b"))
    lua(tmp_path, "includes/c.lua", inc("b"), func("c"))
    lua(tmp_path, "one-1.lua", inc("includes/c"), header="KEYS[1] 'wait'")
    lua(tmp_path, "two-1.lua", inc("includes/b"), header="KEYS[1] 'wait'")
    lua(tmp_path, "three-1.lua", header="KEYS[1] 'wait'")
    graph = include_graph(tmp_path)
    assert includers_of("includes/d", graph) == {"includes/b", "includes/c", "one-1", "two-1"}
    assert includers_of("one-1", graph) == set()
    cyclic = {"includes/p": {"includes/q"}, "includes/q": {"includes/p"}, "s-1": {"includes/q"}}
    assert includers_of("includes/p", cyclic) == {"includes/p", "includes/q", "s-1"}


def test_include_graph_refuses_an_include_that_names_no_file(tmp_path):
    from echomq_viz.redis_side.lua_loader import include_graph

    missing, escaping = tmp_path / "missing", tmp_path / "escaping"
    lua(missing, "includes/a.lua", inc("ghost"), func("a"))
    with pytest.raises(LuaIncludeError, match=r"'ghost' at includes/a\.lua:4"):
        include_graph(missing)
    lua(tmp_path, "outside.lua", func("outside"))
    lua(escaping, "main-1.lua", inc("../outside"), header="KEYS[1] 'wait'")
    with pytest.raises(LuaIncludeError, match="'../outside' at main-1.lua:4 names no Lua file inside"):
        include_graph(escaping)


@pytest.mark.parametrize("name, error", [("includes/nothing", ValueError), (None, TypeError),
                                         ("getPriorityScore", ValueError)])
def test_includers_of_refuses_a_name_not_in_the_graph(name, error):
    from echomq_viz.redis_side.lua_loader import includers_of

    with pytest.raises(error, match="includes/getPriorityScore"):
        includers_of(name)


def test_the_real_include_graph_agrees_with_what_the_loader_inlines(real_scripts):
    from echomq_viz.redis_side.lua_loader import include_graph, includers_of

    graph = include_graph()
    real = [*LUA_DIR.glob("*.lua"), *(LUA_DIR / "includes").rglob("*.lua")]  # not lua/designs/
    assert set(graph) == {p.relative_to(LUA_DIR).with_suffix("").as_posix() for p in real}
    assert not any(name.startswith("designs/") for name in graph)
    for include in INCLUDE_FILES:
        name = f"includes/{include.stem}"
        reaching = {n.split("-")[0] for n in includers_of(name, graph) if not n.startswith("includes/")}
        inlined = {n for n, s in real_scripts.items() if f"local function {include.stem}(" in s.source}
        assert reaching == inlined, name
