"""``crabtui task``: CRAB3 tasks on the embedded engine (crab submit, crab kill, crab tasks).

The commands only record what the user wants in the task table; the task worker beside the
embedded schedd carries it out, as CRAB's REST server and TaskWorker share the work.
"""

from __future__ import annotations

import getpass
import json
import os
import sys
import time

import click

from crabtui.commands.backend import schedd

NUM_AUTOM_JOB_RETRIES = 3  # executions per job and resubmit epoch, as CRAB's TaskWorker ships it


def _fail(message: str) -> None:
    click.echo(f"ERROR: {message}", err=True)
    sys.exit(1)


def _db(ctx: click.Context):
    from engine.crab.taskdb import TaskDB
    from engine.crab.worker import tasks_path

    with schedd(ctx) as client:  # starts the daemon, and with it the task worker
        client.ping()
        return TaskDB(tasks_path(client.state)), client.state


@click.group()
def task() -> None:
    """Submit, follow and kill CRAB3 tasks."""


@task.command()
@click.argument("config", type=click.Path(dir_okay=False))
@click.pass_context
def submit(ctx: click.Context, config: str) -> None:
    """Submit the task CONFIG describes (CRAB's TOML or crabConfig.py; like crab submit)."""
    from engine.crab.config import ConfigError, load_config
    from engine.crab.dagman_creator import TaskAd
    from engine.crab.datasets import Catalogue, DatasetError
    from engine.crab.taskdb import NEW, SUBMIT, Task, TaskError, task_name
    from engine.crab.worker import write_request
    from engine.crab.wrapper import plan_json

    try:
        cfg = load_config(config)
    except ConfigError as e:
        _fail(str(e))
    db, state = _db(ctx)
    try:
        Catalogue.for_state(state).load(cfg.input_dataset)
    except DatasetError as e:
        _fail(f"{config}: Data.inputDataset: {e}")
    now = time.time()
    user = getpass.getuser()
    name = task_name(cfg.request_name, user, now)
    task_dir = os.path.join(state.path, "tasks", name.replace(":", "_"))
    ad = TaskAd(name=name, user=user, dataset=cfg.input_dataset, max_memory_mb=cfg.max_memory_mb,
                max_runtime_min=cfg.max_job_runtime_min, num_cores=cfg.num_cores, priority=cfg.priority,
                site_whitelist=cfg.site_whitelist, site_blacklist=cfg.site_blacklist, storage_site=cfg.storage_site,
                time_scale=cfg.time_scale, max_retries=NUM_AUTOM_JOB_RETRIES,
                failure_plan=tuple(json.loads(plan_json(cfg.failure_plan))), script_exe=cfg.script_exe)
    write_request(task_dir, dataset=cfg.input_dataset, splitting=cfg.splitting, units_per_job=cfg.units_per_job,
                  total_units=cfg.total_units, lumi_mask=cfg.lumi_mask, ad=ad)
    try:
        db.insert(Task(name=name, request_name=cfg.request_name, user=user, status=NEW, command=SUBMIT,
                       config_path=cfg.source, task_dir=task_dir, submitted_at=now, updated_at=now))
    except TaskError as e:
        _fail(str(e))
    click.echo(f"Task name: {name}\nProject dir: {task_dir}\n"
               "Success: Your task has been delivered to the task worker; follow it with "
               f"'crabtui task list' or 'crabtui task status {cfg.request_name}'.")


@task.command("list")
@click.option("--json", "json_output", is_flag=True, help="One object per task.")
@click.pass_context
def list_tasks(ctx: click.Context, json_output: bool) -> None:
    """Every task with its status (like crab tasks)."""
    db, _ = _db(ctx)
    tasks = db.tasks()
    if json_output:
        click.echo(json.dumps([{"name": t.name, "request_name": t.request_name, "status": t.status,
                                "command": t.command, "dagman_id": t.dagman_id, "submitted_at": t.submitted_at,
                                "message": t.message, "task_dir": t.task_dir} for t in tasks], indent=2))
        return
    width = max((len(t.name) for t in tasks), default=4)
    click.echo(f"{'TASK':<{width}}  {'STATUS':<14}  {'COMMAND':<8}  {'DAGMAN':>6}  MESSAGE")
    for t in tasks:
        click.echo(f"{t.name:<{width}}  {t.status:<14}  {t.command:<8}  {t.dagman_id or '-':>6}  {t.message}")


@task.command()
@click.argument("name", metavar="TASK")
@click.pass_context
def kill(ctx: click.Context, name: str) -> None:
    """Kill TASK: its jobs are removed and it ends KILLED (like crab kill)."""
    from engine.crab.taskdb import KILL, TaskError

    db, _ = _db(ctx)
    try:
        task = db.request(name, KILL)
    except TaskError as e:
        _fail(str(e))
    click.echo(f"Kill request for task {task.name} sent; 'crabtui task list' shows when it is KILLED.")


@task.command()
@click.argument("name", metavar="TASK")
@click.option("--long", "long_", is_flag=True, help="One line per job.")
@click.option("--json", "json_output", is_flag=True, help="The task and every job, with its attempts.")
@click.pass_context
def status(ctx: click.Context, name: str, long_: bool, json_output: bool) -> None:
    """The task's status and its jobs' states (like crab status)."""
    from collections import Counter

    from engine.crab.status import job_ids, task_jobs
    from engine.crab.taskdb import TaskError

    db, _ = _db(ctx)
    try:
        task = db.get(name)
    except TaskError as e:
        _fail(str(e))
    ids = job_ids(task.task_dir) if os.path.isdir(task.task_dir) else []
    with schedd(ctx) as client:
        jobs = task_jobs(task.task_dir, ids, client, task.dagman_id)
    if json_output:
        click.echo(json.dumps({"name": task.name, "status": task.status, "command": task.command,
                               "dagman_id": task.dagman_id, "message": task.message,
                               "jobs": [j.as_json() for j in jobs]}, indent=2))
        return
    click.echo(f"Task name:\t\t\t{task.name}\nStatus on the CRAB server:\t{task.status}")
    if task.message:
        click.echo(f"Message:\t\t\t{task.message}")
    counts = Counter(j.state for j in jobs)
    for i, (state, n) in enumerate(sorted(counts.items())):
        label = "Jobs status:" if i == 0 else ""
        click.echo(f"{label:<32}{state:<15}{100 * n / len(jobs):5.1f}% ({n:>4}/{len(jobs)})")
    if long_:
        click.echo(f"\n{'Job':>5} {'State':<14} {'Most Recent Site':<18} {'Retries':>7} {'Last ExitCode':>13}")
        for j in jobs:
            site = j.site_history[-1] if j.site_history else ""
            code = "" if j.exit_code is None else j.exit_code
            click.echo(f"{j.id:>5} {j.state:<14} {site:<18} {j.retries:>7} {code!s:>13}")
