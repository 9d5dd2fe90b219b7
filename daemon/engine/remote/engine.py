"""The engine on remote servers: the engine protocol (``daemon.engine.interface``) over a pool
of OpenAI-compatible completion servers."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

from daemon.engine.answer_text import AnswerText
from daemon.engine.front import QueueFront
from daemon.engine.jobs import Budget, Finished, Job, PromptEvaluated, Sink
from daemon.engine.remote.markers import logit_bias
from daemon.engine.remote.pool import BackendPool
from daemon.engine.remote.server import Overloaded, Refused, RemoteServer, Unreachable
from daemon.engine.report import BackendFigures, EngineKind, EngineStats, RemoteFigures
from daemon.engine.scheduler import Admission, Priority, Scheduler
from daemon.engine.speed import SpeedMeter
from models.loaded import LoadedModel

log = logging.getLogger(__name__)

# Beyond a job's deadline, how long a read may wait before the backend counts as failed.
READ_GRACE_S = 1.0


def completion_body(
    model: str, prompt: str, budget: Budget, marker_bias: dict[str, int]
) -> dict[str, Any]:
    """The ``/v1/completions`` request for a job: its prompt and budget, and a logit bias that
    forbids the server's thinking markers and the job's banned tokens."""
    body: dict[str, Any] = {
        "model": model,
        "prompt": prompt,
        "max_tokens": max(1, budget.max_tokens),
        "temperature": budget.temperature,
        "top_p": budget.top_p,
        "top_k": budget.top_k,
        "seed": budget.seed,
    }
    bias = {**marker_bias, **logit_bias(budget.banned)}
    if bias:
        body["logit_bias"] = bias
    return body


# Requests keep everything assist does around the model (the scheduler, budgets and deadlines, stop
# strings and the ``until`` judge, stages, the result cache); only the forward passes move. A job's
# prompt, built in the model's format from the local model file's vocabulary, is sent as text to
# ``/v1/completions``, streamed back and cut exactly as the local engine cuts its own tokens. A
# dispatcher thread hands a waiting job to a thread of its own whenever a server has room. A job
# whose server fails before any of its text reached the user goes to another server, and the failed
# one is out until a health check reaches it; after text was shown, the job ends with a clear error
# (every read is bounded by the job's deadline). Scoring needs the log-probabilities of given
# tokens, which the completions protocol does not give: a scoring job ends "unsupported" at once.
class RemoteEngine(QueueFront):
    kind: ClassVar[EngineKind] = "remote"

    def __init__(
        self,
        model: LoadedModel,
        pool: BackendPool,
        scheduler: Scheduler | None = None,
        model_name: str | None = None,
    ) -> None:
        self.model = model
        self.pool = pool
        self.scheduler = scheduler if scheduler is not None else Scheduler()
        self.model_name = model_name
        self.stats = EngineStats()
        self.speed = SpeedMeter()
        self.ready = threading.Event()
        self.parallel = pool.capacity
        self._workers = ThreadPoolExecutor(pool.capacity, thread_name_prefix="assist-remote")
        self._dispatcher: threading.Thread | None = None
        self._closed = False
        self._lock = threading.Lock()
        self._running: set[Job] = set()
        self._format_stops = tuple(model.facts.stop_strings)

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        self.pool.start()
        self._dispatcher = threading.Thread(
            target=self._dispatch, name="assist-dispatch", daemon=True
        )
        self._dispatcher.start()
        self.ready.set()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._cancel_waiting()
        with self._lock:
            for job in self._running:
                job.cancel()
        if self._dispatcher is not None:
            self._dispatcher.join(timeout=10)
        self.pool.close()  # cuts the streams still open: their jobs end at once
        self._workers.shutdown(wait=True, cancel_futures=True)

    @property
    def busy(self) -> bool:
        return bool(self._running)

    @property
    def running(self) -> int:
        return len(self._running)

    def cached_prefix(self, tokens: Sequence[int]) -> int:
        return self.pool.cached(tokens)

    def summary(self) -> str:
        urls = ", ".join(server.url for server in self.pool.servers)
        limit = self.pool.servers[0].limit
        return f"remote: {len(self.pool.servers)} backends, {limit} requests each ({urls})"

    def _figures(self) -> RemoteFigures:
        speed = self.speed.current()
        stats = self.stats
        return RemoteFigures(
            busy=int(self.busy),
            running=self.running,
            parallel=self.parallel,
            jobs=stats.jobs,
            cancelled=stats.cancelled,
            deadline=stats.deadline,
            errors=stats.errors,
            tokens_generated=stats.tokens_generated,
            last_job_tokens=stats.last_job_tokens,
            last_job_reason=stats.last_job_reason,
            prompt_tokens_per_s=round(speed.prompt_tps, 1),
            tokens_per_s=round(speed.decode_tps, 1),
            backends=self.backends(),
        )

    def backends(self) -> list[BackendFigures]:
        return self.pool.snapshot()

    # -- submitting --------------------------------------------------------------------------
    def score(
        self,
        tokens: Sequence[int],
        score_from: int,
        *,
        sink: Sink,
        deadline: float,
        admission: Admission | None = None,
        priority: Priority = Priority.INTERACTIVE,
        user: str = "local",
    ) -> Job:
        """Scoring is not offered by completion servers: the job ends "unsupported" at once."""
        job = Job(list(tokens), Budget(0, deadline), (), sink, priority=priority, user=user)
        job.end(Finished("unsupported", 0, ""))
        return job

    def withdraw(self, job: Job) -> None:
        job.cancel()
        if self.scheduler.remove(job):
            self._count("cancelled", 0)
            job.end(Finished("cancelled", 0, ""))

    # -- dispatching -------------------------------------------------------------------------
    def _dispatch(self) -> None:
        """Hand each waiting job, with its place on a backend, to a thread of its own. Places
        are taken here, one job at a time, so no more jobs leave the queue than the backends
        have room for (the rest keep their order in the scheduler, and beyond its bound are
        refused)."""
        while not self._closed:
            if self.pool.any_up() and not self.pool.wait_for_room(timeout=0.5):
                continue
            job = self.scheduler.next_job(timeout=0.5)
            if job is None:
                continue
            assert isinstance(job, Job)
            with self._lock:
                self._running.add(job)
            server = self.pool.acquire(job.tokens)  # None: every backend is down
            try:
                self._workers.submit(self._run, job, server)
            except RuntimeError:  # shutting down
                if server is not None:
                    self.pool.release(server)
                self._finish(job, "cancelled", None)

    def _run(self, job: Job, server: RemoteServer | None) -> None:
        job.started_at = time.perf_counter()
        try:
            self._serve(job, server)
        except Exception as exc:  # the thread must end every job, whatever happened
            log.exception("a remote job failed")
            self._finish(job, "error", None, error=f"the remote job failed: {exc}")

    def _serve(self, job: Job, server: RemoteServer | None) -> None:
        """Run ``job`` on ``server`` (its place taken), and on others while they fail before
        the first text; every place taken is given back."""
        # A server cannot be told to heal the last token: it is given the lead as prompt text.
        prompt = self.model.text_of(job.tokens) + job.budget.lead
        tried: list[RemoteServer] = []
        failures: list[str] = []
        while True:
            reason = self._interrupted(job)
            if reason:
                if server is not None:
                    self.pool.release(server)
                self._finish(job, reason, None)
                return
            if server is None:
                server = self._place(job, tried)
            if server is None and (reason := self._interrupted(job)):
                self._finish(job, reason, None)  # it waited for a place until its deadline
                return
            if server is None:
                why = "; ".join(failures) or self._why_none()
                self._finish(job, "error", None, error=f"no backend could take the request: {why}")
                return
            try:
                self._generate(job, server, prompt)
                return
            except Refused as exc:
                server.errors += 1
                self._finish(job, "error", None, error=f"{server.url} refused the request: {exc}")
                return
            except Unreachable as exc:
                server.errors += 1
                if not isinstance(exc, Overloaded):
                    self.pool.taken_out(server, str(exc))
                if job.first_token_at is not None:
                    self._finish(
                        job,
                        "error",
                        None,
                        error=f"the backend {server.url} failed in the middle of the answer "
                        f"({exc}); ask again and another backend will answer",
                    )
                    return
                server.failovers += 1
                tried.append(server)
                failures.append(f"{server.url}: {exc}")
            finally:
                self.pool.release(server)
            server = None

    def _place(self, job: Job, tried: list[RemoteServer]) -> RemoteServer | None:
        """A place on a backend not tried yet, waiting for one to free up within the job's
        deadline; None when none is up (or all were tried)."""
        while True:
            server = self.pool.acquire(job.tokens, exclude=tried)
            if server is not None:
                return server
            untried = [s for s in self.pool.servers if s.up and s not in tried]
            left = job.budget.deadline - time.perf_counter()
            if not untried or left <= 0 or job.cancelled or self._closed:
                return None
            self.pool.wait_for_room(min(left, 0.5))

    def _why_none(self) -> str:
        return "; ".join(
            f"{s.url} is {'busy' if s.up else 'down'}"
            + (f" ({s.last_error})" if not s.up and s.last_error else "")
            for s in self.pool.servers
        )

    def _interrupted(self, job: Job) -> str | None:
        return "cancelled" if self._closed else job.interruption()

    # -- one answer --------------------------------------------------------------------------
    def _generate(self, job: Job, server: RemoteServer, prompt: str) -> None:
        budget = job.budget
        body = completion_body(
            self.model_name or server.model_id or "default", prompt, budget, server.marker_bias
        )
        log.debug("to %s: %s", server.url, json.dumps(body))
        answer = AnswerText(job.stop_strings, job.until, None)
        began = time.perf_counter()
        first: float | None = None
        count = 0
        reason: str | None = None
        read_s = budget.deadline - began + READ_GRACE_S
        chunks = server.stream(body, read_s)
        try:
            for chunk in chunks:
                reason = self._interrupted(job)
                if reason:
                    break
                if chunk.text:
                    if first is None:
                        first = time.perf_counter()
                        if job.prompt_done_at is None:
                            job.prompt_done_at = first
                            job.sink(PromptEvaluated(len(job.tokens), 0))
                    count += 1
                    emit, ended = answer.add(-1, chunk.text.encode("utf-8"))
                    job.show(emit)
                    if ended:
                        reason = "stop"
                        break
                if chunk.finish:
                    reason = "length" if chunk.finish == "length" else "stop"
        except Unreachable:
            if time.perf_counter() < budget.deadline:
                raise
            reason = "deadline"  # a read that waited out the deadline: late, not failed
        finally:
            chunks.close()
        reason = reason or "stop"
        now = time.perf_counter()
        if first is not None:
            self.speed.record_prompt(len(job.tokens), first - began)
            self.speed.record_decode(count - 1, now - first)
        server.record(None if first is None else (first - began) * 1000, (now - began) * 1000)
        job.show(answer.finish(complete=reason in ("stop", "length")))
        self._finish(job, reason, answer.text, tokens=count)

    def _finish(
        self, job: Job, reason: str, text: str | None, tokens: int = 0, error: str | None = None
    ) -> None:
        with self._lock:
            self._running.discard(job)
        self._count(reason, tokens)
        self.scheduler.finished(job, time.perf_counter() - (job.started_at or job.submitted_at))
        job.end(Finished(reason, tokens, text or "", error=error))

    def _count(self, reason: str, tokens: int) -> None:
        with self._lock:
            self.stats.count(reason, tokens)
            if reason == "error":
                self.stats.errors += 1
