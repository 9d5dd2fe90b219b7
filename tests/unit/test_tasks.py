"""Background tasks stay referenced and their failures are logged, never lost."""

from __future__ import annotations

import asyncio
import logging

from daemon.tasks import BackgroundTasks


async def test_a_failed_background_task_is_logged(caplog):
    tasks = BackgroundTasks("prefetch")

    async def fail() -> None:
        raise RuntimeError("the prefetch broke")

    with caplog.at_level(logging.ERROR, logger="daemon.tasks"):
        task = tasks.start(fail())
        await asyncio.wait([task])
        await asyncio.sleep(0)
    assert len(tasks) == 0
    failed = [r for r in caplog.records if r.getMessage() == "prefetch failed"]
    assert failed and "the prefetch broke" in str(failed[0].exc_info[1])


async def test_cancelled_tasks_are_not_reported_as_failures(caplog):
    tasks = BackgroundTasks()
    task = tasks.start(asyncio.sleep(10))
    tasks.cancel_all()
    await asyncio.wait([task])
    assert task.cancelled() and not caplog.records
