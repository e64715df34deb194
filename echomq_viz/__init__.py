"""echomq-viz: how one Redis sorted set serves as a two-key priority queue.

Modules, from the pure core outward:

- :mod:`echomq_viz.score`   the composite score maths (pure, no I/O)
- :mod:`echomq_viz.keys`    every Redis key of a queue, built in one place
- :mod:`echomq_viz.scripts` the real EchoMQ Lua scripts and their Python API
- :mod:`echomq_viz.server`  a real Redis: ``REDIS_URL`` or a private embedded one
- :mod:`echomq_viz.cluster` a local Redis Cluster built from those servers
- :mod:`echomq_viz.live`    demo queues: the experiments the notebooks run
- :mod:`echomq_viz.inspect` a read-only report on any real queue
- :mod:`echomq_viz.interop` the stock BullMQ client, from plain functions
- :mod:`echomq_viz.plots`   figures drawn on a matplotlib ``ax``, updated in place
- :mod:`echomq_viz.widgets` the notebooks' interactive views

Importing the package imports none of them, so each stays as light as it is.
"""

__version__ = "0.1.0"
