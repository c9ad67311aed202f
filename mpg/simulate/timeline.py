"""Play one job's plan out in time: its scheduler events and its runtime spans.

The story of every job is the same, with its own numbers: it is submitted, waits in the queue,
its tasks get their chips one by one (piecemeal, so some wanted time is not all-allocated), and
its program starts as attempt 0: init, compile, then steps with an occasional data_wait and, for
training, a checkpoint_save every K steps (blocking, or overlapping the next steps when the job
saves asynchronously). An interruption (TASK_EVICT, TASK_FAIL or TASK_LOST of one task) stops the
attempt; the steps after its last durable checkpoint are lost. The task is scheduled again after
a delay and the program restarts as the next attempt (init, a mostly cached compile, a
checkpoint_restore), resuming after the last durable step. The job ends FINISHED when its work is
done, CANCELLED by its owner, FAILED after a fatal task failure, or is still open when the window
closes: nothing after the window's end is emitted.

Steps are generated vectorised per attempt; the Python loop runs per attempt, not per step.
Times are float seconds since the window's start; scheduler events fall on whole seconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mpg.definitions.vocabulary import JOB_STATES, SPAN_KINDS
from mpg.simulate.fleet import DAY_S, JobPlan

EVENT_TYPES = (
    "JOB_SUBMIT",
    "TASK_SCHEDULE",
    "TASK_EVICT",
    "TASK_FAIL",
    "TASK_LOST",
    "TASK_FINISH",
    "JOB_END",
)
_EV = {name: code for code, name in enumerate(EVENT_TYPES)}
_KIND = {name: code for code, name in enumerate(SPAN_KINDS)}
_STATE = {name: code for code, name in enumerate(JOB_STATES)}
_INTERRUPTS = ("TASK_EVICT", "TASK_FAIL", "TASK_LOST")
_INTERRUPT_P = (0.70, 0.20, 0.10)
_FATAL_FAIL_P = 0.4  # chance a TASK_FAIL ends the job FAILED instead of being retried
_IN_PROGRESS_P = 0.3  # chance the step running at an interruption still reports its span
_NO_STEP = -1
_UNBOUNDED = 2**62


@dataclass(frozen=True)
class JobTrace:
    """One job's records as columns. Codes index EVENT_TYPES, SPAN_KINDS and JOB_STATES; -1 means
    the field is absent. Event times are whole seconds, span times float seconds."""

    ev_type: np.ndarray
    ev_ts: np.ndarray
    ev_task: np.ndarray
    ev_chips: np.ndarray
    ev_state: np.ndarray
    sp_attempt: np.ndarray
    sp_kind: np.ndarray
    sp_start: np.ndarray
    sp_end: np.ndarray
    sp_step: np.ndarray


@dataclass(frozen=True)
class _Outcome:
    """How an attempt went: the last step it reported, the last durable one, whether the job's
    work is complete, and when its last span ended."""

    last_step: int
    durable_step: int
    finished: bool
    t_done: float


class _Recorder:
    """Collects one job's events and span chunks; `trace` concatenates them once."""

    def __init__(self) -> None:
        self._events: list[tuple[int, float, int, int, int]] = []
        self._spans: list[tuple[np.ndarray, ...]] = []

    def event(
        self, type_: str, ts: float, task: int = -1, chips: int = -1, state: str = ""
    ) -> None:
        self._events.append((_EV[type_], ts, task, chips, _STATE.get(state, -1)))

    def spans(
        self, attempt: int, kind: str, start: np.ndarray, end: np.ndarray, step: np.ndarray | None
    ) -> None:
        n = len(start)
        steps = np.full(n, _NO_STEP, np.int64) if step is None else step
        self._spans.append((np.full(n, attempt), np.full(n, _KIND[kind]), start, end, steps))

    def trace(self, window_end: float) -> JobTrace:
        """The records, less anything the exporters had not yet written when the window closed."""
        ev = np.array(self._events, dtype=np.float64).reshape(-1, 5)
        ev = ev[ev[:, 1] <= window_end]
        sp = [np.concatenate(c) for c in zip(*self._spans, strict=True)] if self._spans else None
        keep = sp[3] <= window_end if sp else np.zeros(0, bool)
        span_cols = [c[keep] for c in sp] if sp else [np.zeros(0)] * 5
        return JobTrace(
            ev_type=ev[:, 0].astype(np.int8),
            ev_ts=ev[:, 1],
            ev_task=ev[:, 2].astype(np.int32),
            ev_chips=ev[:, 3].astype(np.int32),
            ev_state=ev[:, 4].astype(np.int8),
            sp_attempt=span_cols[0].astype(np.int32),
            sp_kind=span_cols[1].astype(np.int8),
            sp_start=span_cols[2].astype(np.float64),
            sp_end=span_cols[3].astype(np.float64),
            sp_step=span_cols[4].astype(np.int64),
        )


class _Job:
    """Simulates one job; the state that carries from one attempt to the next lives here."""

    def __init__(self, plan: JobPlan, rng: np.random.Generator, window_end: float) -> None:
        self.plan = plan
        self.rng = rng
        self.window_end = window_end
        self.rec = _Recorder()
        self.training = plan.workload_class == "training"
        self.chips_per_task = plan.chips_requested // plan.tasks
        # Serving has no amount of work to finish: it runs until its time is up.
        serving = plan.workload_class == "serving"
        self.last_step = _UNBOUNDED if serving else math.ceil(plan.run_s / plan.step_s)

    def run(self) -> JobTrace:
        p, rng, rec = self.plan, self.rng, self.rec
        rec.event("JOB_SUBMIT", p.submit_s)
        queue = min(rng.lognormal(math.log(900), 1.5), DAY_S)
        offsets = np.sort(rng.exponential(20, p.tasks))
        if p.tasks > 1 and rng.random() < 0.25:  # one straggler task waits much longer
            offsets[-1] += rng.uniform(300, 7200)
        scheduled = np.ceil(p.submit_s + queue + offsets)
        for task, ts in enumerate(scheduled):
            rec.event("TASK_SCHEDULE", ts, task, self.chips_per_task)
        t = float(scheduled[-1]) + rng.uniform(5, 120)
        # Owners cancel jobs that run, not ones still queueing.
        cancel_at = (
            math.inf
            if p.cancel_after_s is None
            else max(math.ceil(p.submit_s + p.cancel_after_s), math.ceil(t) + 60)
        )
        serving = p.workload_class == "serving"
        serving_end = math.ceil(p.submit_s + p.run_s) if serving else math.inf
        attempt, next_step, restore = 0, 1, 0
        while True:
            interrupt_at = math.ceil(t + rng.exponential(DAY_S / p.interrupts_per_day))
            ends = {
                "interrupt": interrupt_at,
                "cancel": cancel_at,
                "window": self.window_end,
                "serving": serving_end,
            }
            why = min(ends, key=ends.__getitem__)
            stop = ends[why]
            out = self._attempt(attempt, t, stop, next_step, restore, why == "interrupt")
            if out.finished:
                self._finish(math.ceil(out.t_done + rng.uniform(0.5, 10)))
                return rec.trace(self.window_end)
            if why in ("serving", "cancel"):
                self._close(why, stop)
            if why != "interrupt":
                return rec.trace(self.window_end)
            kind = str(rng.choice(_INTERRUPTS, p=_INTERRUPT_P))
            task = int(rng.integers(p.tasks))
            rec.event(kind, stop, task)
            if kind == "TASK_FAIL" and rng.random() < _FATAL_FAIL_P:
                rec.event("JOB_END", stop + math.ceil(rng.uniform(1, 120)), state="FAILED")
                return rec.trace(self.window_end)
            again = stop + math.ceil(min(rng.lognormal(math.log(1200), 1.3), DAY_S / 2))
            owner_end = min(cancel_at, serving_end)
            if owner_end < again:  # the job ends while the task waits for chips
                self._close("cancel" if cancel_at < serving_end else "serving", owner_end)
                return rec.trace(self.window_end)
            rec.event("TASK_SCHEDULE", again, task, self.chips_per_task)
            attempt += 1
            t = again + rng.uniform(5, 120)
            next_step = out.durable_step + 1 if self.training else out.last_step + 1
            restore = out.durable_step if self.training else 0

    def _close(self, why: str, ts: float) -> None:
        """The owner ends the job: a serving job whose time is up, or a cancelled one."""
        if why == "serving" and self.plan.serving_end_state == "FINISHED":
            self._finish(ts)
        else:
            self.rec.event("JOB_END", ts, state="CANCELLED")

    def _finish(self, ts: float) -> None:
        for task in range(self.plan.tasks):
            self.rec.event("TASK_FINISH", ts, task)
        self.rec.event("JOB_END", ts + math.ceil(self.rng.uniform(1, 30)), state="FINISHED")

    def _attempt(
        self, attempt: int, t: float, stop: float, first: int, restore: int, interrupted: bool
    ) -> _Outcome:
        """Emit one attempt's spans from `t` until `stop`; what ends after `stop` is not emitted
        (but see _IN_PROGRESS_P)."""
        p, rng = self.plan, self.rng
        startup = [("init", rng.uniform(10, 180))]
        compile_s = min(rng.lognormal(math.log(240), 0.8), 1800) * (0.3 if attempt else 1.0)
        startup.append(("compile", compile_s))
        if restore:
            startup.append(("checkpoint_restore", rng.uniform(30, 300)))
        for kind, length in startup:
            if t + length > stop:
                return _Outcome(first - 1, restore, False, t)
            step = np.array([restore]) if kind == "checkpoint_restore" else None
            self.rec.spans(attempt, kind, np.array([t]), np.array([t + length]), step)
            t += length
        durable, last = restore, first - 1
        while last < self.last_step:
            n = int(max(1, min(self.last_step - last, (stop - t) / (0.9 * p.step_s) + 8, 200_000)))
            steps = np.arange(last + 1, last + 1 + n, dtype=np.int64)
            t_chunk_end, done, saved = self._steps(attempt, t, stop, steps, interrupted)
            last, t = last + done, t_chunk_end
            durable = max(durable, saved)
            if done < n:
                return _Outcome(last, durable, False, t)
        # Interrupted during the final, blocking save: the last steps are not durable yet.
        return _Outcome(last, durable, t <= stop, t)

    def _steps(
        self, attempt: int, t: float, stop: float, steps: np.ndarray, interrupted: bool
    ) -> tuple[float, int, int]:
        """Emit the steps of `steps` that end by `stop`, with their data_waits and saves.

        Returns when the last emitted work ended, how many steps were emitted and the last step
        made durable by a save that ended by `stop` (0 if none).
        """
        p, rng, n = self.plan, self.rng, len(steps)
        duration = p.step_s * rng.lognormal(0, 0.04, n)
        duration *= np.where(rng.random(n) < 0.01, rng.uniform(1.5, 4, n), 1.0)  # stragglers
        wait = np.where(
            rng.random(n) < p.data_wait_p, rng.lognormal(math.log(p.data_wait_s), 0.7, n), 0.0
        )
        host_gap = rng.uniform(0, 2 * p.idle_share * p.step_s, n)  # host-side work, logging
        saves = np.zeros(n, bool)
        if p.checkpoint_every:
            saves = (steps % p.checkpoint_every == 0) | (steps == self.last_step)
        save_len = np.where(saves, p.save_s * rng.uniform(0.7, 1.3, n), 0.0)
        final = steps == self.last_step  # the final save always blocks
        blocking = np.where(~p.async_checkpoint | final, save_len, 0.0)
        chunk_end = t + np.cumsum(host_gap + wait + duration + blocking)
        step_end = chunk_end - blocking
        step_start = step_end - duration
        done = int(np.searchsorted(step_end, stop, side="right"))
        in_progress = interrupted and done < n and step_start[min(done, n - 1)] < stop
        emit = done + int(in_progress and rng.random() < _IN_PROGRESS_P)
        self.rec.spans(attempt, "step", step_start[:emit], step_end[:emit], steps[:emit])
        waited = np.flatnonzero(wait[: done + 1] > 0)
        waited = waited[step_start[waited] <= stop]
        self.rec.spans(
            attempt, "data_wait", step_start[waited] - wait[waited], step_start[waited], None
        )
        saved = np.flatnonzero(saves[:done] & (step_end[:done] + save_len[:done] <= stop))
        self.rec.spans(
            attempt,
            "checkpoint_save",
            step_end[saved],
            step_end[saved] + save_len[saved],
            steps[saved],
        )
        last_end = float(chunk_end[done - 1]) if done else t
        return last_end, done, int(steps[saved[-1]]) if len(saved) else 0


def simulate_job(plan: JobPlan, rng: np.random.Generator, window_end: float) -> JobTrace:
    """The records of one job over a window that closes at `window_end` (seconds)."""
    return _Job(plan, rng, window_end).run()
