"""The storage layer behind a store that fails as real ones do: fake-gcs-server and moto behind
the fault-injecting proxy (tests/support/fault_proxy.py), started by the tests on 127.0.0.1.

A busy store is ridden through by the clients' retries; a write that cannot succeed is one line
naming it and saying it is transient; a conditional write whose answer was lost is recognised as
the writer's own on its retry; an upload interrupted mid-way resumes where the store says it
stopped (the proxy answers fake-gcs-server's status queries as GCS does).

    .venv/bin/pytest tests/e2e/test_storage_faults.py
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pyarrow as pa
import pytest

from mpg.core.errors import one_line
from mpg.storage import TRANSIENT, PreconditionFailedError, Storage, TransientStoreError
from tests.support.emulators import FaultyStore

TABLE = pa.table({"job": [f"job-{i}" for i in range(50_000)], "chips": list(range(50_000))})


@pytest.fixture(params=["faulty_gcs", "faulty_s3"])
def faulty(request: pytest.FixtureRequest) -> Iterator[tuple[FaultyStore, Storage]]:
    """A fresh root on an emulator behind the proxy, faithful at first."""
    store: FaultyStore = request.getfixturevalue(request.param)
    with store.activated():
        yield store, Storage(store.root(f"faults-{uuid.uuid4().hex[:12]}"))


def test_a_busy_store_is_ridden_through(faulty: tuple[FaultyStore, Storage]) -> None:
    """Every kind of fault once, scripted, then a seeded 15% of requests: how many requests a
    store's client makes varies, so a drawn share alone may inject too few to test anything."""
    proxy, store = faulty
    kinds = ["503", "429", "reset", "lost-reply"]
    script = ["503", "pass", "429", "reset", "pass", "lost-reply"]
    with proxy.injecting(rate=0.15, kinds=kinds, script=script, seed=20, reset_counts=True):
        for i in range(4):
            store.write_parquet(TABLE, f"t/part-{i}.parquet")
        listed = [e.path for e in store.list("t")]
        tables = [store.read_parquet(p) for p in listed]
        injected = proxy.injected()["injected"]
    assert listed == [f"t/part-{i}.parquet" for i in range(4)]
    assert all(t.equals(TABLE) for t in tables)
    assert sorted(injected) == sorted(kinds), injected  # every kind did happen


def test_an_upload_interrupted_midway_resumes_whole(faulty: tuple[FaultyStore, Storage]) -> None:
    """A connection reset in the middle of a multi-request upload: the client asks the store
    what it holds and goes on from there; the object is whole, not truncated or empty."""
    proxy, store = faulty
    data = bytes(range(256)) * (12 * 4096)  # 12 MiB: several upload requests on either store
    faults = ["pass", "pass", "reset", "pass", "lost-reply"]
    with proxy.injecting(script=faults), store.open_output("big.bin") as stream:
        stream.write(data)
    assert store.read_bytes("big.bin") == data


def test_a_lost_upload_session_is_one_transient_line_naming_the_write(
    faulty: tuple[FaultyStore, Storage],
) -> None:
    proxy, store = faulty
    store.write_text("kept.txt", "old")
    with proxy.injecting(lose_uploads=True), pytest.raises(TransientStoreError) as raised:
        store.write_parquet(TABLE, "kept.txt")
    uri = store.uri_of("kept.txt")
    assert one_line(raised.value) == (
        f"writing {uri}: the storage service lost the upload session (HTTP 404 to it); {TRANSIENT}"
    )
    assert store.read_text("kept.txt") == "old"


def test_a_conditional_write_whose_answer_was_lost_is_still_its_own(
    faulty: tuple[FaultyStore, Storage],
) -> None:
    """The write succeeds, its answer is lost, the client retries it and the store refuses the
    retry (the object is no longer at the version it names): still the writer's own write."""
    proxy, store = faulty
    with proxy.injecting(script=["lost-reply"]):
        first = store.write_if("pointer.json", b"v1", None)
    assert store.read_versioned("pointer.json") == (b"v1", first)
    with proxy.injecting(script=["lost-reply"]):
        second = store.write_if("pointer.json", b"v2", first)
    assert store.read_versioned("pointer.json") == (b"v2", second)
    with pytest.raises(PreconditionFailedError):  # another writer's refusal stays one
        store.write_if("pointer.json", b"v3", first)
