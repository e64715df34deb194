"""The pure core: the score's maths and every key's name, no I/O.

What a queue's score is (:mod:`.score`: ``priority * 2³² + counter % 2³²``),
what the double it is stored as can hold (:mod:`.doubles`), every Redis key of a
queue built from one list of names (:mod:`.keys`), what a read prioritized set
means (:mod:`.queue_report`), the argument checks and their one wording
(:mod:`.checks`), the one notation for powers and thousands (:mod:`.notation`),
the tier colours (:mod:`.colours`), a password hidden in any message
(:mod:`.redaction`) and a Redis URL read as redis-py reads it (:mod:`.redis_url`). No network, no files, no processes.

May import: the standard library and numpy; nothing of echomq_viz outside the core.
"""
