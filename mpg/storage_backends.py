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

# An emulator is on this machine: a dead or wrong endpoint should fail in seconds, not after the
# 15 minutes of retries google-cloud-cpp allows real GCS by default.
EMULATOR_RETRY_LIMIT = datetime.timedelta(seconds=10)
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
    if isinstance(where, GcsSettings):
        if where.emulator is None:
            return pafs.GcsFileSystem()
        url = urlparse(where.emulator)
        return pafs.GcsFileSystem(
            anonymous=True,
            scheme=url.scheme,
            endpoint_override=url.netloc,
            retry_time_limit=EMULATOR_RETRY_LIMIT,
        )
    if isinstance(where, S3Settings):
        options: dict[str, Any] = {"region": where.region}
        if where.endpoint:
            url = urlparse(where.endpoint)
            options.update(scheme=url.scheme, endpoint_override=url.netloc)
        return pafs.S3FileSystem(**options)
    return pafs.LocalFileSystem()


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

    # A session of its own: boto3's default session is not safe to share between threads
    # (the lease renews from one).
    return boto3.session.Session().client(
        "s3", endpoint_url=where.endpoint, region_name=where.region
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
_CLIENT_MODULES = ("google.", "botocore", "boto3", "requests", "urllib3")
# What pyarrow (google-cloud-cpp, the AWS SDK), google-cloud-storage and botocore say, by kind;
# the first that matches names the problem.
_REASONS = (
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
    (
        re.compile(r"UNAVAILABLE|Could not connect|Connection refused|EndpointConnectionError"),
        UNREACHABLE,
    ),
)


def is_service_error(exc: BaseException) -> bool:
    """An error from an object store's client (pyarrow's are OSErrors; Google's and AWS's
    libraries and their HTTP layers have their own), as opposed to a bug in the caller."""
    module = type(exc).__module__
    return isinstance(exc, OSError) or module.startswith(_CLIENT_MODULES)


def describe(exc: BaseException, scheme: str) -> str:
    """What went wrong, in a few words: a known kind, else the error's first line, shortened."""
    text = f"{type(exc).__name__}: {exc}"
    for pattern, reason in _REASONS:
        if pattern.search(text):
            return f"{reason} at {endpoint(scheme)}" if reason == UNREACHABLE else reason
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return first[:200]
