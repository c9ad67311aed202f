"""The storage layer on every backend: a local folder, GCS (gcp-storage-emulator and
fake-gcs-server) and S3 (moto), all started by the tests on 127.0.0.1 (tests/support/emulators.py).

Each Storage method is checked the same way everywhere; where object stores differ from a folder
(no directories), the test says so. Conditional writes race real processes. pyiceberg tables are
written through `Storage.iceberg_properties()`.

    .venv/bin/pytest tests/e2e/test_storage.py tests/e2e/test_storage_lock.py
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import time
from typing import Any

import pyarrow as pa
import pytest

from mpg.core.errors import StoreError, UserError, one_line
from mpg.storage import (
    LASTING,
    TRANSIENT,
    NotFoundError,
    PreconditionFailedError,
    Storage,
    TransientStoreError,
    backends,
)
from tests.support.emulators import free_port
from tests.support.racers import Crew, race_write_if

TABLE = pa.table({"day": ["2026-11-20", "2026-11-21", "2026-11-21"], "chips": [8, 16, 4]})


# -- reading and writing -----------------------------------------------------------------------


def test_bytes_and_text_round_trip(store: Storage) -> None:
    store.write_text("a/b.txt", "héllo")
    store.write_bytes("a/c.bin", bytes(range(256)))
    assert store.read_text("a/b.txt") == "héllo"
    assert store.read_bytes("a/c.bin") == bytes(range(256))
    with store.open_input("a/c.bin") as handle:  # random access: ranged reads remotely
        assert handle.size() == 256
        assert handle.read_at(4, 250) == bytes([250, 251, 252, 253])
    with store.open_input_stream("a/c.bin") as stream:
        assert stream.read(3) == bytes([0, 1, 2])


def test_info(store: Storage) -> None:
    before = time.time_ns()
    store.write_text("a/b.txt", "hi")
    entry = store.info("a/b.txt")
    assert entry is not None
    assert (entry.path, entry.size) == ("a/b.txt", 2)
    # S3 keeps whole seconds; allow for that and for the emulators' clocks being this machine's.
    assert before - 2_000_000_000 <= entry.mtime_ns <= time.time_ns() + 1_000_000_000
    assert store.info("a/missing.txt") is None
    assert store.info("a") is None  # a folder or prefix is not a file


def test_exists_and_is_dir(store: Storage) -> None:
    assert not store.exists()  # an empty prefix is nothing on object stores; a missing folder
    assert not store.is_dir()
    store.write_text("a/b/c.txt", "x")
    assert store.exists("a/b/c.txt") and not store.is_dir("a/b/c.txt")
    assert store.exists("a") and store.is_dir("a") and store.is_dir("a/b") and store.is_dir()
    assert not store.exists("a/b/c") and not store.exists("a/b/c.txt/d")
    store.delete(["a/b/c.txt"])
    # A folder outlives its last file; a prefix does not (and S3 leaves no marker object).
    assert store.is_dir("a/b") == (not store.remote)


def test_list(store: Storage) -> None:
    for path in ("t/x.txt", "t/day=1/y.txt", "tx/z.txt", "u.txt"):
        store.write_text(path, path)
    assert [e.path for e in store.list()] == ["t/day=1/y.txt", "t/x.txt", "tx/z.txt", "u.txt"]
    # A prefix is a folder name: "t" does not match "tx/".
    assert [e.path for e in store.list("t")] == ["t/day=1/y.txt", "t/x.txt"]
    assert [e.size for e in store.list("t")] == [len("t/day=1/y.txt"), len("t/x.txt")]
    assert store.list("missing") == []
    assert store.child("missing").list() == []


def test_parquet_round_trip(store: Storage) -> None:
    store.write_parquet(TABLE, "p/day=2026-11-21/part-0.parquet", row_group_size=2)
    assert store.read_parquet("p/day=2026-11-21/part-0.parquet").equals(TABLE)
    assert store.parquet_file("p/day=2026-11-21/part-0.parquet").metadata.num_row_groups == 2
    second = store.read_parquet("p/day=2026-11-21/part-0.parquet", row_groups=[1])
    assert second.to_pydict() == {"day": ["2026-11-21"], "chips": [4]}
    narrow = pa.schema([("chips", pa.int32())])
    assert store.read_parquet("p/day=2026-11-21/part-0.parquet", schema=narrow).schema == narrow


def test_open_output_streams_a_large_object(store: Storage) -> None:
    # Past the 5 MiB of one S3 part: a multipart upload on S3, several writes everywhere.
    chunk = bytes(range(256)) * 4096
    with store.open_output("big.bin") as stream:
        for _ in range(24):
            stream.write(chunk)
    info = store.info("big.bin")
    assert info is not None and info.size == 24 * len(chunk)
    with store.open_input("big.bin") as handle:
        assert handle.read_at(256, len(chunk) * 23) == bytes(range(256))


def test_open_output_that_fails_leaves_nothing(store: Storage) -> None:
    store.write_text("kept.txt", "old")
    for path in ("new.txt", "kept.txt"):
        with pytest.raises(ValueError, match="boom"), store.open_output(path) as stream:
            stream.write(b"half of it")
            raise ValueError("boom")
    assert not store.exists("new.txt")
    assert store.read_text("kept.txt") == "old"
    assert [e.path for e in store.list()] == ["kept.txt"]  # no temporary left behind


def test_delete(store: Storage) -> None:
    for path in ("t/a.txt", "t/d/b.txt", "tx/c.txt"):
        store.write_text(path, "x")
    store.delete(["t/a.txt", "t/never-there.txt"])
    assert [e.path for e in store.list()] == ["t/d/b.txt", "tx/c.txt"]
    store.delete_prefix("t")
    store.delete_prefix("nothing-here")
    assert [e.path for e in store.list()] == ["tx/c.txt"]
    store.delete([])


def test_child_uri_and_pickling(store: Storage) -> None:
    child = store.child("runs/r1")
    child.write_text("x.txt", "in the child")
    assert store.read_text("runs/r1/x.txt") == "in the child"
    assert child.uri == store.uri_of("runs/r1")
    if store.remote:
        assert child.uri == f"{store.uri}/runs/r1"
        assert child.uri_of("x.txt").startswith(f"{store.scheme}://{store.bucket}/")
    copy = pickle.loads(pickle.dumps(child))
    assert copy == child and copy.read_text("x.txt") == "in the child"


# -- errors users can cause --------------------------------------------------------------------


def test_a_missing_file_is_one_line_naming_it(store: Storage) -> None:
    with pytest.raises(NotFoundError) as raised:
        store.read_text("nope/missing.txt")
    assert isinstance(raised.value, FileNotFoundError | UserError)
    uri = store.uri_of("nope/missing.txt")
    assert one_line(raised.value) == f"reading {uri}: no such file; {LASTING}"
    with pytest.raises(FileNotFoundError):
        store.read_parquet("nope/missing.parquet")


def test_a_missing_bucket_is_one_line(store: Storage) -> None:
    if not store.remote:
        pytest.skip("local roots have no bucket")
    elsewhere = Storage(f"{store.scheme}://no-such-bucket-mpg/out")
    expected = f"no such bucket {store.scheme}://no-such-bucket-mpg"
    for attempt in (
        lambda: elsewhere.write_text("a.txt", "x"),
        lambda: elsewhere.read_text("a.txt"),
        elsewhere.list,
        lambda: elsewhere.write_parquet(TABLE, "t.parquet"),
    ):
        with pytest.raises(StoreError) as raised:
            attempt()
        assert one_line(raised.value).endswith(f"{expected}; {LASTING}"), one_line(raised.value)


def test_an_endpoint_that_does_not_answer_is_one_line(
    monkeypatch: pytest.MonkeyPatch, moto_s3: Any
) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    # the wording is what is tested, not the ~50 s the default attempts back off for
    monkeypatch.setattr(backends, "S3_ATTEMPTS", 2)
    with moto_s3.activated():
        monkeypatch.setenv("AWS_ENDPOINT_URL", dead)
        with pytest.raises(TransientStoreError) as raised:
            Storage("s3://bucket/out").read_text("a.txt")
    assert str(raised.value) == (
        f"reading s3://bucket/out/a.txt: cannot reach the storage service at {dead}; {TRANSIENT}"
    )


@pytest.mark.parametrize(
    ("message", "reason", "transient"),
    [
        ("google::cloud::Status(PERMISSION_DENIED: Permanent error ...)", "permission denied", 0),
        ("AWS Error ACCESS_DENIED during GetObject: Access Denied", "permission denied", 0),
        ("403 GET https://storage.googleapis.com/...: Forbidden", "permission denied", 0),
        ("Could not automatically determine credentials.", "no valid credentials", 0),
        ("AWS Error UNKNOWN (HTTP status 403) ... InvalidAccessKeyId", "permission denied", 0),
        ("google::cloud::Status(UNAUTHENTICATED: ...)", "no valid credentials", 0),
        ("When reading 'b/k': AWS Error NO_SUCH_BUCKET during HeadObject", "no such bucket", 0),
        ("something new\nwith a second line", "something new", 0),
        # pyarrow's GCS client (google-cloud-cpp), as it words a 503 after its retries
        (
            "google::cloud::Status(UNAVAILABLE: Retry policy exhausted, with a last message of "
            '{"error": {"code": 503, "message": "Service Unavailable"}} error_info={...})',
            "the storage service kept failing (HTTP 503) through retries",
            1,
        ),
        (
            "When reading information for key 'a' in bucket 'b': AWS Error SLOW_DOWN during "
            "HeadObject operation: Please reduce your request rate.",
            "the storage service kept failing (SLOW_DOWN) through retries",
            1,
        ),
        (
            "When uploading part for key 'x' in bucket 'b': AWS Error NETWORK_CONNECTION during "
            "UploadPart operation: curlCode: 56, Failure when receiving data from the peer",
            "the storage service kept failing (NETWORK_CONNECTION) through retries",
            1,
        ),
        ("429 POST https://storage.googleapis.com/upload/...: Too Many Requests",
         "the storage service kept failing (HTTP 429) through retries", 1),
    ],
)  # fmt: skip
def test_service_errors_are_named(message: str, reason: str, transient: int) -> None:
    problem = backends.describe(OSError(message), "gs")
    assert problem.reason.startswith(reason)
    assert problem.transient is bool(transient)


@pytest.mark.parametrize(
    "message",
    [
        "google::cloud::Status(NOT_FOUND: Permanent error, with a last message of {...} "
        "error_info={metadata={gcloud-cpp.retry.function=UploadChunk}})",
        "When uploading part for key 'x' in bucket 'b': AWS Error NO_SUCH_UPLOAD during "
        "UploadPart operation: The specified upload does not exist.",
    ],
)
def test_a_lost_upload_session_is_transient(message: str) -> None:
    problem = backends.describe(OSError(message), "gs", writing=True)
    assert problem == backends.Problem(
        "the storage service lost the upload session (HTTP 404 to it)", transient=True
    )


# -- conditional writes ------------------------------------------------------------------------


def test_write_if(store: Storage) -> None:
    assert store.read_versioned("pointer.json") == (None, None)
    first = store.write_if("pointer.json", b"v1", None)
    assert store.read_versioned("pointer.json") == (b"v1", first)
    second = store.write_if("pointer.json", b"v2", first)
    assert second != first
    assert store.read_versioned("pointer.json") == (b"v2", second)


def test_write_if_refuses_a_stale_version(racing_store: Storage) -> None:
    first = racing_store.write_if("pointer.json", b"v1", None)
    with pytest.raises(PreconditionFailedError, match="another writer"):
        racing_store.write_if("pointer.json", b"again", None)  # must not exist: it does
    racing_store.write_if("pointer.json", b"v2", first)
    with pytest.raises(PreconditionFailedError):
        racing_store.write_if("pointer.json", b"v3", first)  # v2 came in between
    assert racing_store.read_versioned("pointer.json")[0] == b"v2"


ROUNDS = 3


def test_racing_writers_one_wins_each_round(racing_store: Storage, crew: Crew) -> None:
    won = crew.run(race_write_if, racing_store.uri, ROUNDS)
    for round_ in range(ROUNDS):
        assert sum(round_ in rounds for rounds in won) == 1, won
    (last,) = [member for member, rounds in enumerate(won) if ROUNDS - 1 in rounds]
    assert racing_store.read_versioned("pointer.json")[0] == f"racer{last}:{ROUNDS - 1}".encode()


# -- pyiceberg ---------------------------------------------------------------------------------


def test_iceberg_table_through_the_same_backend(store: Storage) -> None:
    """mpg's catalog (the metadata files themselves: mpg.pipelines.iceberg) commits through each
    backend's FileIO, and the metadata file a commit returns is the whole table to a reader."""
    from pyiceberg.table import StaticTable

    from mpg.pipelines.iceberg import SnapshotCatalog

    catalog = SnapshotCatalog("test", **store.iceberg_properties())
    table = catalog.create_table(
        ("mpg", "job_day"), schema=TABLE.schema, location=store.uri_of("tables/job_day")
    )
    first = table.metadata_location
    table.append(TABLE)
    table.append(TABLE.slice(0, 1))
    assert table.scan().to_arrow().num_rows == 4
    reopened = catalog.register_table(("mpg", "job_day"), table.metadata_location)
    assert reopened.scan(row_filter="chips = 16").to_arrow().num_rows == 1
    # Without any catalog: the metadata.json a pointer object would name.
    static = StaticTable.from_metadata(table.metadata_location, store.iceberg_properties())
    assert static.scan().to_arrow().num_rows == 4
    # Each commit wrote a metadata file of its own; the first still reads as the empty table.
    assert (
        StaticTable.from_metadata(first, store.iceberg_properties()).scan().to_arrow().num_rows == 0
    )
    # The table's files went where Storage sees them: 3 metadata files, 2 data files.
    files = [e.path for e in store.list("tables/job_day")]
    assert sum(p.endswith(".metadata.json") for p in files) == 3
    assert sum(p.startswith("tables/job_day/data/") for p in files) == 2


def test_importing_storage_loads_no_cloud_client() -> None:
    """`import mpg.storage` stays cheap: Google's and AWS's libraries load on first use."""
    code = (
        "import sys, mpg.storage, mpg.storage.lock\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'google', 'boto3', 'botocore',"
        " 'pyiceberg'}))"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert found.stdout.strip() == "[]", found.stderr


def test_bytes_are_stored_as_given_whatever_the_name(store: Storage) -> None:
    """A `.gz` name is not a request to compress: trace files are uploaded as they are."""
    import gzip

    packed = gzip.compress(b'{"type": "JOB_SUBMIT"}\n')
    store.write_bytes("scheduler/events.jsonl.gz", packed)
    with store.open_output("runtime/spans.jsonl.gz") as stream:
        stream.write(packed)
    assert store.read_bytes("scheduler/events.jsonl.gz") == packed
    assert store.read_bytes("runtime/spans.jsonl.gz") == packed
    assert store.info("scheduler/events.jsonl.gz").size == len(packed)
