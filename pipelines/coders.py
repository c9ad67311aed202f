"""Elements handed from one step to the next in memory: a coder that sizes them by their buffers.

Beam's SDK worker sizes a sample of every PCollection's elements (the first ten, then a few per
doubling) by encoding them with the PCollection's coder; for a Python object that is pickling
it: a copy of a block's bytes, a block's parsed records or a bucket's records, made only to be
counted. The elements that pass between fused steps (a block to its parser, parsed records to
the writer that cuts them into buckets, a bucket's segment or a day's rows to their sink) never
cross a shuffle, so their encoding is never needed; they are registered with `InMemory`, whose
size estimate is the element's `nbytes` (its buffers), and whose encoding (pickle: Arrow IPC for
the tables) is there for a runner that would materialise such a PCollection anyway.
"""

from __future__ import annotations

import pickle
from typing import Any

import apache_beam as beam


class InMemory(beam.coders.Coder):
    """The coder of a type whose elements have `nbytes`: sized without being encoded."""

    def __init__(self, kind: type) -> None:
        self._kind = kind

    @classmethod
    def from_type_hint(cls, typehint: type, registry: object) -> InMemory:
        return cls(typehint)

    def to_type_hint(self) -> type:
        return self._kind

    def encode(self, value: Any) -> bytes:
        return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)

    def decode(self, encoded: bytes) -> Any:
        return pickle.loads(encoded)

    def estimate_size(self, value: Any) -> int:
        return int(value.nbytes)

    def is_deterministic(self) -> bool:
        return False


def in_memory(*kinds: type) -> None:
    """Give each of `kinds` (types with `nbytes`) the `InMemory` coder."""
    for kind in kinds:
        beam.coders.registry.register_coder(kind, InMemory)
