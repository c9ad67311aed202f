"""Where `mpg run --publish bigquery` publishes and what it loaded: plain values, validated.

Kept apart from `mpg.pipelines.bigquery` so that parsing options does not import the BigQuery
client (about a second), which only a run that publishes there needs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mpg.core.errors import OptionsError, UserError

# What BigQuery accepts as names (a project may carry a "domain:" prefix).
_PROJECT = re.compile(r"(?:[a-z][a-z0-9.-]*:)?[a-z][a-z0-9-]{4,28}[a-z0-9]")
_DATASET = re.compile(r"[A-Za-z0-9_]{1,1024}")


class BigQueryError(UserError):
    """BigQuery refused or could not be reached: credentials, network, permissions, quota."""


@dataclass(frozen=True)
class BigQueryTarget:
    """Where to publish. `endpoint` (an emulator, a private endpoint) implies anonymous
    credentials; without it the client uses Application Default Credentials."""

    project: str
    dataset: str
    endpoint: str | None = None
    retry_s: float = 120.0  # how long a call is retried before the publish fails

    def __post_init__(self) -> None:
        if not _PROJECT.fullmatch(self.project):
            raise OptionsError(f"--project {self.project!r} is not a BigQuery project id")
        if not _DATASET.fullmatch(self.dataset):
            raise OptionsError(
                f"--dataset {self.dataset!r} is not a BigQuery dataset name "
                "(letters, digits and underscores)"
            )
        if self.endpoint is not None and not self.endpoint.startswith(("http://", "https://")):
            raise OptionsError(f"--bigquery-endpoint {self.endpoint!r} is not an http(s) URL")
        if self.retry_s <= 0:
            raise OptionsError("the BigQuery retry time must be positive")

    @property
    def dataset_id(self) -> str:
        return f"{self.project}.{self.dataset}"

    @property
    def location(self) -> str:
        """The dataset and the server holding it: what a state records as published to."""
        return f"{self.endpoint or 'bigquery'}/{self.dataset_id}"

    def table(self, name: str) -> str:
        return f"{self.dataset_id}.{name}"


@dataclass(frozen=True)
class BigQueryLoad:
    """What one publish wrote: tables, day partitions replaced (table x day) and rows loaded."""

    dataset: str
    tables: int
    partitions: int
    rows: int
