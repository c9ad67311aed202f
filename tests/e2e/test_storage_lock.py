"""The writer's lease (mpg/storage/lock.py) on a local folder, GCS and S3 emulators.

A second holder is refused with one line naming the first; a holder killed on this host is taken
over at once (locally the kernel frees the flock; on object stores its pid is gone), one on
another host only once its lease expires; of
several processes taking over at once exactly one wins; a holder renews its lease and notices
when another run took it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from mpg.core.errors import UserError, one_line
from mpg.storage import Storage
from mpg.storage.lock import LeaseHeldError, LeaseLostError, LeaseRecord, hold_lease
from tests.support.racers import Crew, take_lease

LEASE = "_lease.json"


def _stale(owner: str) -> bytes:
    """The record of a holder killed a minute ago, its lease expired."""
    now = time.time()
    return LeaseRecord(owner, "gone-host", 4242, now - 61, now - 60).to_bytes()


def test_a_second_holder_is_refused_naming_the_first(store: Storage) -> None:
    with hold_lease(store, LEASE, owner="run-1", lease_s=30) as lease:
        with (
            pytest.raises(LeaseHeldError) as refused,
            hold_lease(store, LEASE, owner="run-2", lease_s=30),
        ):
            pytest.fail("two holders")
        message = one_line(refused.value)
        assert isinstance(refused.value, UserError) and message == str(refused.value)
        assert message.startswith(f"{store.uri_of(LEASE)} is ")
        assert f"run run-1 (host {lease.record.host}, pid {os.getpid()}) since 20" in message
        assert ("lease until" in message) == store.remote
        lease.check()
    # Released at exit: the next run gets it.
    assert not store.exists(LEASE)
    with hold_lease(store, LEASE, owner="run-2", lease_s=30):
        pass


def test_a_killed_holders_lease_is_taken_over(store: Storage) -> None:
    """A holder killed on this host is taken over at once, its lease unexpired: its pid is gone."""
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, store.uri, LEASE, "60"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "holding\n"
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    with hold_lease(store, LEASE, owner="next-run", lease_s=30) as lease:
        assert not lease.lost


def test_a_lease_of_another_host_holds_until_it_expires(remote_store: Storage) -> None:
    """This host cannot see another host's processes: only expiry frees that lease (object
    stores; a local lease is a lock the kernel frees with its holder)."""
    lease_s = 1.5
    now = time.time()
    remote_store.write_bytes(
        LEASE, LeaseRecord("other-run", "other-host", 4242, now, now + lease_s).to_bytes()
    )
    with (
        pytest.raises(LeaseHeldError, match="run other-run"),
        hold_lease(remote_store, LEASE, owner="next-run", lease_s=30),
    ):
        pass
    time.sleep(max(0.0, now + lease_s - time.time()) + 0.2)
    with hold_lease(remote_store, LEASE, owner="next-run", lease_s=30) as lease:
        assert not lease.lost


# A holder in its own process, killed by the test while it holds the lease.
_HOLD = """
import sys, time
from mpg.storage import Storage
from mpg.storage.lock import hold_lease
with hold_lease(Storage(sys.argv[1]), sys.argv[2], owner="killed-run", lease_s=float(sys.argv[3])):
    print("holding", flush=True)
    time.sleep(60)
"""


def test_of_simultaneous_takers_one_wins(racing_store: Storage, crew: Crew) -> None:
    if racing_store.remote:
        racing_store.write_bytes(LEASE, _stale("killed-run"))
    outcomes = crew.run(take_lease, racing_store.uri, LEASE)
    assert outcomes.count("won") == 1, outcomes
    winner = f"run taker{outcomes.index('won')} "
    for outcome in outcomes:
        assert outcome == "won" or winner in outcome, outcomes
    assert not racing_store.exists(LEASE)


def test_a_holder_renews_its_lease(store: Storage) -> None:
    if not store.remote:
        pytest.skip("a local lock does not expire")
    with hold_lease(store, LEASE, owner="run-1", lease_s=1.0) as lease:
        first = lease.record.expires_at
        time.sleep(1.4)  # past the first expiry: only renewals (every 1/3 s) keep it
        assert lease.record.expires_at > first
        # read as the lease reads itself: one version's bytes (a ranged read of an object
        # renewed meanwhile could mix two)
        stored = LeaseRecord.parse(store.read_versioned(LEASE)[0] or b"")
        assert stored is not None and stored.expires_at > first
        with (
            pytest.raises(LeaseHeldError, match="run run-1"),
            hold_lease(store, LEASE, owner="run-2", lease_s=0.6),
        ):
            pass
        assert not lease.lost
        lease.check()


def test_a_holder_notices_it_lost_the_lease(racing_store: Storage) -> None:
    if not racing_store.remote:
        pytest.skip("nobody takes a local lock from a live holder")
    with hold_lease(racing_store, LEASE, owner="run-1", lease_s=0.6) as lease:
        # Another run takes it over (as if this one had stalled past its expiry).
        _, version = racing_store.read_versioned(LEASE)
        racing_store.write_if(LEASE, _stale("run-2"), version)
        deadline = time.monotonic() + 2
        while not lease.lost and time.monotonic() < deadline:
            time.sleep(0.05)
        assert lease.lost
        with pytest.raises(LeaseLostError, match="lease of run run-1 lost"):
            lease.check()
    # What the other run wrote is not released by the loser.
    assert LeaseRecord.parse(racing_store.read_bytes(LEASE)).owner == "run-2"
