"""The experiments the notebooks run, on a real Redis.

Demo queues of one's own (:mod:`.live`), every script that scores a job
(:mod:`.paths`, notebook 08), the designs that fail beside the real one
(:mod:`.designs`, notebook 09), the stock BullMQ client from plain functions
(:mod:`.interop`) and a read-only report on any real queue
(:mod:`.inspection`). They return plain data; none draws or knows a widget.

May import: :mod:`echomq_viz.core`, :mod:`echomq_viz.redis_side`.
"""
