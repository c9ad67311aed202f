"""The output folder: snapshots behind one switch, so a reader never sees a half-written run.

    DIR/mpg.duckdb            -> .mpg/current/mpg.duckdb    (symbolic links, made once)
    DIR/tables, DIR/records   -> .mpg/current/...
    DIR/validation_report.md  -> .mpg/current/validation_report.md
    DIR/runs/<run id>.json       one record per run, whatever its outcome (`mpg.pipelines.runlog`)
    DIR/.mpg/current          -> snapshots/<run id>          (the switch)
    DIR/.mpg/snapshots/<id>/     complete published outputs: the current one and the one before
    DIR/.mpg/staging/<id>/       the run in progress
    DIR/.mpg/lock                held (flock) by the run writing DIR

A run writes everything into its staging folder, renames the finished folder into `snapshots/`
and then replaces the `current` link in one `rename(2)`: the database, the Parquet tables and the
record store change together, at one instant, or not at all. A run killed at any point leaves
the previous snapshot current; the next run (holding the lock, so no other run is alive) clears
what it left. The snapshot before the current one is kept, so a reader that resolved the old
link just before a switch can still finish reading it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

from mpg.errors import StoreError, UserError

DATABASE = "mpg.duckdb"
REPORT = "validation_report.md"
# In a staging folder: what the source suites found, combined over all buckets.
SOURCE_RESULTS = Path("validation") / "sources.parquet"
# What the user sees at the top of DIR, each a link into the current snapshot.
PUBLISHED = (DATABASE, "tables", "records", REPORT)
# What every run rebuilds from the rest of its snapshot, so never carried over from the last one.
REBUILT = (
    DATABASE,
    REPORT,
    "validation",
    "work",
    "tables/goodput_by_slice",
    "tables/record_counts",
    "tables/validation_results",
    "state/manifest.parquet",
)
_STATE = ".mpg"


class OutputLockedError(UserError):
    """Another `mpg` process is writing the same output folder."""


class OutputLayout:
    """Paths of one output folder and the few operations that change what is published."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.state = out / _STATE
        self.current = self.state / "current"
        self.snapshots = self.state / "snapshots"
        self.staging_root = self.state / "staging"
        self.runs = out / "runs"

    def staging(self, run_id: str) -> Path:
        return self.staging_root / run_id

    def snapshot_ids(self) -> set[str]:
        """The runs whose outputs are still kept (the current one and the one before)."""
        return {p.name for p in self.snapshots.iterdir()} if self.snapshots.is_dir() else set()

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the folder's lock for a run: one writer at a time; the kernel frees it on death."""
        self.state.mkdir(parents=True, exist_ok=True)
        with (self.state / "lock").open("a+") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise OutputLockedError(
                    f"another mpg process is writing {self.out} (it holds {self.state / 'lock'})"
                ) from None
            yield

    def clear_leftovers(self) -> None:
        """Check the layout, then remove what killed runs left: staging folders and snapshots no
        longer needed.

        Call with the lock held: then no other run is alive to own them.
        """
        if self.current.exists() and not self.current.is_symlink():
            # A copy that followed the links (shutil.copytree, cp -L) made `current` a folder:
            # the next commit could not switch it, and which snapshot is current is lost.
            raise StoreError(
                f"{self.current} is a folder, not a link to a snapshot: the output folder was "
                "copied with its links followed; copy it keeping links (cp -a, rsync -a)"
            )
        shutil.rmtree(self.staging_root, ignore_errors=True)
        for legacy in self.out.glob(".staging-*"):  # the layout before snapshots
            shutil.rmtree(legacy, ignore_errors=True)
        self._prune_snapshots()

    def commit(self, staging: Path, run_id: str) -> None:
        """Publish a finished staging folder: rename it into `snapshots/` and switch to it."""
        self.snapshots.mkdir(parents=True, exist_ok=True)
        snapshot = self.snapshots / run_id
        staging.replace(snapshot)
        _replace_with_link(self.current, Path("snapshots") / run_id)
        _fsync_dir(self.state)
        self._link_published()
        self._prune_snapshots()

    def _link_published(self) -> None:
        """Make DIR's public names links into `current` (a no-op after the first run)."""
        for name in PUBLISHED:
            path = self.out / name
            target = Path(_STATE) / "current" / name
            if path.is_symlink() and path.readlink() == target:
                continue
            if path.is_dir() and not path.is_symlink():
                # A folder of the layout before snapshots: move it aside, then link.
                retired = self.state / f"retired-{name}"
                path.replace(retired)
                _replace_with_link(path, target)
                shutil.rmtree(retired)
            else:
                _replace_with_link(path, target)

    def _prune_snapshots(self) -> None:
        """Keep the current snapshot and the newest one before it; remove the rest."""
        if not self.snapshots.is_dir():
            return
        keep = {self.current.readlink().name} if self.current.is_symlink() else set()
        older = sorted(p.name for p in self.snapshots.iterdir() if p.name not in keep)
        keep.update(older[-1:])
        for path in self.snapshots.iterdir():
            if path.name not in keep:
                shutil.rmtree(path, ignore_errors=True)


def link_snapshot(snapshot: Path, staging: Path) -> int:
    """Start a run's staging folder as hard links to a snapshot's files (less REBUILT ones);
    returns how many. Snapshot files are never written again (`write_parquet` replaces by
    rename), so the run then changes only what it rewrites, and the snapshot stays intact."""
    count = 0
    for folder, _, names in os.walk(snapshot):
        relative = Path(folder).relative_to(snapshot)
        for name in names:
            path = relative / name
            if any(path == Path(r) or Path(r) in path.parents for r in REBUILT):
                continue
            (staging / relative).mkdir(parents=True, exist_ok=True)
            os.link(snapshot / path, staging / path)
            count += 1
    return count


def _replace_with_link(path: Path, target: Path) -> None:
    """Point `path` at `target` atomically: a new link under a temporary name, renamed over it."""
    temporary = path.with_name(f".{path.name}.link-{os.getpid()}")
    temporary.unlink(missing_ok=True)
    temporary.symlink_to(target)
    temporary.replace(path)


def _fsync_dir(path: Path) -> None:
    """Make a rename in `path` durable (a crash of the machine, not only of the process)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
