"""Limits that are settings: their defaults live here, on the bottom floor, so both the spec that
records them (`config.run`) and the code that applies them (`items.checked_item`) read one number."""

from __future__ import annotations

#: an item whose texts together are longer is an invalid row (`--max-input-chars`)
DEFAULT_MAX_INPUT_CHARS = 200_000
