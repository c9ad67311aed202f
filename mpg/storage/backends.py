"""Where each scheme's clients connect, built from the environment, and their errors in one line.

Every client mpg uses on object storage (pyarrow's filesystems for data, google-cloud-storage and
boto3 for conditional writes and deletes, pyiceberg's FileIO for tables) is configured here from
the same variables, so that all of them reach the same service, in the launcher and in the Beam
workers it starts (which inherit the environment):

- `STORAGE_EMULATOR_HOST` (GCS): an emulator's URL (`http://127.0.0.1:9023`; a bare host:port
  means http). Clients connect anonymously. Unset: Google's default credentials.
- `AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL` (S3): a private endpoint (moto, MinIO). Keys and
  region come from the usual `AWS_*` variables or files; with an endpoint and no region,
  `us-east-1`.

Google and AWS libraries are imported only when a client is first built: `import mpg.storage`
stays cheap. Clients are cached per process (and per settings, so a test can switch emulators),
never shared across a fork.
"""

from __future__ import annotations

import datetime
import functools
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

import pyarrow.fs as pafs

if TYPE_CHECKING:
    from google.cloud import storage as gcs

# Retries (docs/decisions.md, "Retries"): every client retries what passes (429, 5xx, a dropped
# connection, a timeout) with exponential back-off, for about a minute or more, before the run
# fails with a transient error. Real services get minutes (a regional blip passes;
# google-cloud-cpp's own default of 15 minutes would hold a worker hostage); an emulator is on
# this machine, and what fails for half a minute there will not pass.
SERVICE_RETRY = datetime.timedelta(minutes=5)
EMULATOR_RETRY = datetime.timedelta(seconds=30)
# S3 clients count attempts instead. The AWS SDKs' "standard" mode keeps a retry quota that a
# busy store drains within a few dozen faults (then nothing is retried: measured here, 11 of 150
# reads failed at a 15% fault rate), so their "legacy" modes: no quota. pyarrow's (the C++ SDK's
# DefaultRetryStrategy) backs off 25 ms doubling: twelve attempts span ~50 s. boto3's backs off
# a random fraction of 1 s doubling, uncapped: six attempts span up to ~30 s.
S3_ATTEMPTS = 12
BOTO_ATTEMPTS = 6
# pyiceberg's GCS FileIO has no anonymous mode: it gets a fixed token that emulators ignore,
# which must never expire (milliseconds since the epoch: year 2100).
_EMULATOR_TOKEN_EXPIRES_AT_MS = "4102444800000"


@dataclass(frozen=True)
class GcsSettings:
    """The GCS endpoint: Google's (with default credentials) or an emulator (anonymous)."""

    emulator: str | None

    @classmethod
    def from_env(cls) -> GcsSettings:
        host = os.environ.get("STORAGE_EMULATOR_HOST")
        if not host:
            return cls(None)
        return cls(host if "://" in host else f"http://{host}")


@dataclass(frozen=True)
class S3Settings:
    """The S3 endpoint (None: AWS's) and region (None: the SDK's own resolution)."""

    endpoint: str | None
    region: str | None

    @classmethod
    def from_env(cls) -> S3Settings:
        endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
        region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
        return cls(endpoint or None, region or ("us-east-1" if endpoint else None))


def settings(scheme: str) -> GcsSettings | S3Settings | None:
    if scheme == "gs":
        return GcsSettings.from_env()
    if scheme == "s3":
        return S3Settings.from_env()
    return None


def endpoint(scheme: str) -> str:
    """Where `scheme`'s clients connect, for messages."""
    where = settings(scheme)
    if isinstance(where, GcsSettings):
        return where.emulator or "Google Cloud Storage"
    if isinstance(where, S3Settings):
        return where.endpoint or f"AWS S3 ({where.region or 'default region'})"
    return "the local filesystem"


def filesystem(scheme: str) -> pafs.FileSystem:
    """The pyarrow filesystem for `scheme`, as the environment now says to reach it."""
    return _filesystem(scheme, settings(scheme), os.getpid())


@functools.cache
def _filesystem(scheme: str, where: GcsSettings | S3Settings | None, pid: int) -> pafs.FileSystem:
    if where is None:
        return pafs.LocalFileSystem()
    return _client_filesystem(where)


def _client_filesystem(where: GcsSettings | S3Settings) -> pafs.FileSystem:
    if isinstance(where, GcsSettings):
        if where.emulator is None:
            return pafs.GcsFileSystem(retry_time_limit=SERVICE_RETRY)
        url = urlparse(where.emulator)
        return pafs.GcsFileSystem(
            anonymous=True,
            scheme=url.scheme,
            endpoint_override=url.netloc,
            retry_time_limit=EMULATOR_RETRY,
        )
    options: dict[str, Any] = {"region": where.region, "retry_strategy": S3Retries()}
    if where.endpoint:
        url = urlparse(where.endpoint)
        options.update(scheme=url.scheme, endpoint_override=url.netloc)
    return pafs.S3FileSystem(**options)


class S3Retries(pafs.AwsDefaultS3RetryStrategy):
    """pyarrow's S3 retries as mpg sets them, constructible by name without arguments (as
    pyiceberg's `s3.retry-strategy-impl` wants)."""

    def __init__(self) -> None:
        super().__init__(max_attempts=S3_ATTEMPTS)


def gcs_client() -> gcs.Client:
    """A google-cloud-storage client for the same endpoint as `filesystem("gs")`."""
    return _gcs_client(GcsSettings.from_env(), os.getpid())


@functools.cache
def _gcs_client(where: GcsSettings, pid: int) -> gcs.Client:
    from google.cloud import storage

    if where.emulator is None:
        return storage.Client()
    from google.auth.credentials import AnonymousCredentials

    return storage.Client(
        project="mpg-emulated",
        credentials=AnonymousCredentials(),
        client_options={"api_endpoint": where.emulator},
    )


def s3_client() -> Any:
    """A boto3 S3 client for the same endpoint and region as `filesystem("s3")`."""
    return _s3_client(S3Settings.from_env(), os.getpid())


@functools.cache
def _s3_client(where: S3Settings, pid: int) -> Any:
    import boto3
    from botocore.config import Config

    # A session of its own: boto3's default session is not safe to share between threads
    # (the lease renews from one).
    return boto3.session.Session().client(
        "s3",
        endpoint_url=where.endpoint,
        region_name=where.region,
        config=Config(retries={"mode": "legacy", "max_attempts": BOTO_ATTEMPTS}),
    )


def iceberg_properties(scheme: str) -> dict[str, str]:
    """pyiceberg FileIO properties reaching the same service as `filesystem(scheme)`.

    They may hold the AWS keys found in the environment: pass them to a catalog or `StaticTable`,
    never log or store them.
    """
    properties = {"py-io-impl": "pyiceberg.io.pyarrow.PyArrowFileIO"}
    where = settings(scheme)
    if isinstance(where, GcsSettings) and where.emulator is not None:
        properties |= {
            "gcs.service.host": where.emulator,
            "gcs.oauth2.token": "emulator",
            "gcs.oauth2.token-expires-at": _EMULATOR_TOKEN_EXPIRES_AT_MS,
        }
    if isinstance(where, S3Settings):
        properties["s3.retry-strategy-impl"] = f"{S3Retries.__module__}.{S3Retries.__name__}"
        if where.endpoint:
            properties["s3.endpoint"] = where.endpoint
        if where.region:
            # Without one pyiceberg asks AWS for the bucket's region, even for a private endpoint.
            properties["s3.region"] = where.region
        for variable, key in (
            ("AWS_ACCESS_KEY_ID", "s3.access-key-id"),
            ("AWS_SECRET_ACCESS_KEY", "s3.secret-access-key"),
            ("AWS_SESSION_TOKEN", "s3.session-token"),
        ):
            if os.environ.get(variable):
                properties[key] = os.environ[variable]
    return properties


# -- errors ------------------------------------------------------------------------------------

UNREACHABLE = "cannot reach the storage service"
NO_SUCH_BUCKET = "no such bucket"
LOST_UPLOAD = "the storage service lost the upload session"
_CLIENT_MODULES = ("google.", "botocore", "boto3", "requests", "urllib3")


@dataclass(frozen=True)
class Problem:
    """What went wrong with a request to the store, in a few words, and whether it is of the
    kind that passes (a busy or briefly unavailable service, a dropped connection, a lost upload
    session), so that a rerun can be expected to succeed."""

    reason: str
    transient: bool


# What pyarrow (google-cloud-cpp, the AWS SDK), google-cloud-storage and botocore say, by kind;
# the first that matches names the problem. Each is lasting: a rerun fails the same way.
_LASTING = (
    (re.compile(r"NO_SUCH_BUCKET|NoSuchBucket|bucket does not exist", re.I), NO_SUCH_BUCKET),
    (
        re.compile(
            r"PERMISSION_DENIED|ACCESS_DENIED|AccessDenied|Forbidden|\b403\b|Permission denied",
        ),
        "permission denied",
    ),
    (
        re.compile(
            r"UNAUTHENTICATED|\b401\b|Unauthorized|credentials|InvalidAccessKeyId|"
            r"SignatureDoesNotMatch|ExpiredToken|InvalidToken",
            re.I,
        ),
        "no valid credentials (Google: application default credentials; "
        "AWS: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or a profile)",
    ),
)
_UNREACHABLE = re.compile(
    r"Could not connect|Couldn't connect|Connection refused|EndpointConnectionError|"
    r"Failed to establish a new connection"
)
# An upload session (a GCS resumable upload, an S3 multipart upload) the service no longer knows.
_LOST_UPLOAD = re.compile(
    r"NO_SUCH_UPLOAD|NoSuchUpload|UploadChunk.*NOT_FOUND|NOT_FOUND.*UploadChunk|"
    r"upload session|resumable.*\b404\b|\b404\b.*resumable",
    re.S,
)
# A busy or failing service, or a dropped connection, still failing after the client's retries.
_BUSY = re.compile(
    r"UNAVAILABLE|RESOURCE_EXHAUSTED|DEADLINE_EXCEEDED|Retry policy exhausted|SLOW_DOWN|SlowDown|"
    r"SERVICE_UNAVAILABLE|ServiceUnavailable|Service Unavailable|THROTTL|Throttl|"
    r"TooManyRequests|Too Many Requests|INTERNAL_FAILURE|InternalError|Internal Server Error|"
    r"RequestTimeout|REQUEST_TIMEOUT|NETWORK_CONNECTION|Connection reset|reset by peer|"
    r"ConnectionClosed|RemoteDisconnected|Connection aborted|timed out|Timeout|Recv failure|"
    r"Empty reply|curlCode: (?:28|52|55|56)|BadGateway|GatewayTimeout|"
    r"Failed to flush response stream|"
    r"HTTP status(?: code)?:? (?:429|5\d\d)|\b(?:429|500|502|503|504) "
)
_HTTP_STATUS = re.compile(
    r"http_status_code=(\d{3})|HTTP status(?: code)?:? (\d{3})|\"code\": (\d{3})|"
    r"\b(\d{3}) (?:GET|PUT|POST|DELETE|HEAD|PATCH) "
)


def is_service_error(exc: BaseException) -> bool:
    """An error from an object store's client (pyarrow's are OSErrors; Google's and AWS's
    libraries and their HTTP layers have their own), as opposed to a bug in the caller."""
    module = type(exc).__module__
    return isinstance(exc, OSError) or module.startswith(_CLIENT_MODULES)


def describe(exc: BaseException, scheme: str, writing: bool = False) -> Problem:
    """What went wrong, in a few words, and whether it passes: a known kind, else the error's
    first line, shortened (not known to pass). `writing`: a "not found" from the service is then
    a lost upload session, not a missing file."""
    text = f"{type(exc).__name__}: {exc}"
    for pattern, reason in _LASTING:
        if pattern.search(text):
            return Problem(reason, transient=False)
    if _UNREACHABLE.search(text):
        return Problem(f"{UNREACHABLE} at {endpoint(scheme)}", transient=True)
    if writing and _LOST_UPLOAD.search(text):
        return Problem(f"{LOST_UPLOAD} (HTTP 404 to it)", transient=True)
    busy = _BUSY.search(text)
    if busy:
        status = _HTTP_STATUS.search(text)
        code = next((g for g in status.groups() if g), None) if status else None
        what = f"HTTP {code}" if code else busy.group(0).strip()
        return Problem(f"the storage service kept failing ({what}) through retries", True)
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return Problem(first[:200], transient=False)
