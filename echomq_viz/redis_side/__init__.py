"""The Redis side: a real redis-server, who owns which keys, and the Lua scripts.

A private embedded server or the one ``REDIS_URL`` names (:mod:`.server`, kept
alive by :mod:`._supervisor`, its processes and folders tracked by
:mod:`._process`; one that evicts keys warned of once, :mod:`.eviction`), which kernel owns which demo keys on a shared server
(:mod:`.owners`; the demo keys' names and the scan that finds them, :mod:`.demo_keys`), a Redis user per student (:mod:`.acl`) and their caps on
jobs (:mod:`.caps`), a fair gate between the students and a shared server
(:mod:`.gate`, each connection through it :mod:`._gate_connection`), a small
local cluster (:mod:`.cluster`), what a Redis error means in one line
(:mod:`.redis_errors`), a reply as text (:mod:`.replies`), and the scripts in ``lua/``:
loaded strictly (:mod:`.lua_loader`), their teaching variants
(:mod:`.variants`), one Redis Function library of them all, called with FCALL
or EVALSHA (:mod:`.functions`), called from Python (:mod:`.scripts`),
pipelined (:mod:`.script_stream`).

May import: :mod:`echomq_viz.core`.
"""
