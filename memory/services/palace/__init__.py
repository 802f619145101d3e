"""The memory palace: every live entry pinned to a room#slot coordinate
(slots), a short marker scored for distinctiveness (placards), an
append-only route through it (tour) and spaced-repetition practice (review).

The write path calls `slots.place_item` / `slots.place_skill`; everything
else reads. Data written around the write path (imports, rows from before
the palace existed) marks its space (`Space.palace_backlog_at`) and is
slotted in batches by `slots.slot_missing`: on the palace's next read when
the backlog is small, else by the background task `memory.slot_palace`
(and `manage.py slot_palace`)."""
