"""Processes that race each other, for the conditional-write and lease tests.

    with Crew(3) as crew:
        results = crew.run(race_write_if, "s3://bucket/root", 3)   # one result per member

A `Crew` starts its member processes once (spawned, not forked: storage clients hold sockets and
threads) and runs each task in all of them at once, with a shared barrier the task uses to line
the members up (everyone has read before anyone writes). Starting processes is the slow part of
a race (~1-2 s each on two cores), so one crew serves every backend: each task carries the
emulator's environment variables and the member sets them before running it.

Tasks are plain functions of this module (picklable by name) taking `(member, barrier, *args)`.
"""

from __future__ import annotations

import multiprocessing
import os
import traceback
from collections.abc import Callable
from typing import Any

from mpg.storage import PreconditionFailedError, Storage
from mpg.storage.lock import LeaseHeldError, hold_lease

BARRIER_TIMEOUT_S = 30
# What a task gets from the test's environment: where the emulator of the test is.
ENDPOINT_VARIABLES = (
    "STORAGE_EMULATOR_HOST",
    "AWS_ENDPOINT_URL",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_DEFAULT_REGION",
)


class Crew:
    """`size` member processes running the same task together."""

    def __init__(self, size: int) -> None:
        context = multiprocessing.get_context("spawn")
        self.barrier = context.Barrier(size, timeout=BARRIER_TIMEOUT_S)
        self._inboxes = [context.Queue() for _ in range(size)]
        self._outbox = context.Queue()
        self._members = [
            context.Process(target=_serve, args=(i, inbox, self._outbox, self.barrier))
            for i, inbox in enumerate(self._inboxes)
        ]

    def __enter__(self) -> Crew:
        for member in self._members:
            member.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for inbox in self._inboxes:
            inbox.put(None)
        for member in self._members:
            member.join(timeout=10)
            if member.is_alive():
                member.kill()

    def run(self, task: Callable[..., Any], *args: Any) -> list[Any]:
        """`task(member, barrier, *args)` in every member at once; their results by member.
        A task that raised gives an AssertionError here with its traceback."""
        env = {name: os.environ[name] for name in ENDPOINT_VARIABLES if name in os.environ}
        for inbox in self._inboxes:
            inbox.put((task, args, env))
        answers = dict(self._outbox.get(timeout=120) for _ in self._members)
        failed = [text for ok, text in answers.values() if not ok]
        if failed:
            self.barrier.reset()
            raise AssertionError(f"a racer failed:\n{failed[0]}")
        return [answers[i][1] for i in range(len(self._members))]


def _serve(member: int, inbox: Any, outbox: Any, barrier: Any) -> None:
    while (job := inbox.get()) is not None:
        task, args, env = job
        for name in ENDPOINT_VARIABLES:
            os.environ.pop(name, None)
        os.environ.update(env)
        try:
            outbox.put((member, (True, task(member, barrier, *args))))
        except BaseException:
            outbox.put((member, (False, traceback.format_exc())))


# -- tasks -------------------------------------------------------------------------------------


def race_write_if(member: int, barrier: Any, root: str, rounds: int) -> list[int]:
    """Each round, every member reads the pointer's version, then all try to write it: the
    rounds this member won (round 0 races to create the object, the rest to update it)."""
    storage = Storage(root)
    won = []
    for round_ in range(rounds):
        barrier.wait()
        _, version = storage.read_versioned("pointer.json")
        barrier.wait()
        try:
            storage.write_if("pointer.json", f"racer{member}:{round_}".encode(), version)
            won.append(round_)
        except PreconditionFailedError:
            pass
    return won


def take_lease(member: int, barrier: Any, root: str, path: str) -> str:
    """Every member tries to take the lease at once: "won", or the refusal's message.

    On object stores every taker reads the (expired) lease before any writes, so all but one
    lose on the precondition; locally they meet at the barrier, then race for the flock.
    """
    storage = Storage(root)
    if storage.remote:
        read = storage.read_versioned
        calls = []

        def read_then_wait(path: str) -> tuple[bytes | None, str | None]:
            found = read(path)
            if not calls:  # the first read only: a loser reads again to name the winner
                calls.append(path)
                barrier.wait()
            return found

        storage.read_versioned = read_then_wait  # type: ignore[method-assign]
    else:
        barrier.wait()
    try:
        with hold_lease(storage, path, owner=f"taker{member}", lease_s=30):
            barrier.wait()  # hold it until every taker has tried
            return "won"
    except LeaseHeldError as exc:
        barrier.wait()
        return str(exc)
