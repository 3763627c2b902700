"""``crab submit`` on the user's machine: a checked configuration becomes a task request.

:func:`submit` does what CRAB's client and the start of its TaskWorker check before a task is
accepted, and refuses what could not run, each time with one line that says why:

* the input (:mod:`engine.crab.taskworker.task_input`): the catalogue's dataset, or a synthetic
  stand-in for a name the catalogue does not know (said once, in a note that tells how to replace
  it); the user's files; or PrivateMC's generated events.  ``Data.ignoreLocality``, user files and
  PrivateMC run at any site of the pool, which the caller passes (the embedded schedd's sites);
* ``Data.inputBlocks`` that are not blocks of the dataset;
* the site lists against where the data is and where the pool has slots: blocks that could run
  nowhere are skipped with DagmanCreator's warning, and a task with no block left is refused with
  its message (CRAB refuses it at submission, rather than sending jobs that can never start);
* the storage site (:mod:`engine.crab.grid.storage`: any CMS site name).

The request (:func:`engine.crab.taskworker.worker.write_request`) and the task's row in the task
table are written last, so a refused task leaves nothing behind.
"""

from __future__ import annotations

import getpass
import json
import os
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace

from engine.crab.ap.sites import SiteListError, SiteLists, pool_sites, read_global_blacklist
from engine.crab.client.config import TaskConfig
from engine.crab.client.sandbox import SandboxError, write_sandbox
from engine.crab.grid.storage import StorageError, stageout_ad, storage_site
from engine.crab.taskworker import stand_ins
from engine.crab.taskworker.dagman_creator import TaskAd
from engine.crab.taskworker.datasets import Catalogue, Dataset, DatasetError, UnknownDataset
from engine.crab.taskworker.parents import why_none, without_parents
from engine.crab.taskworker.task_input import InputSpec, load_input, locality, refusal, skipped_warning
from engine.crab.taskworker.taskdb import (EMBEDDED, HTCONDOR, NEW, SUBMIT, UPLOADED, Task, TaskDB, TaskError,
                                          task_name)
from engine.crab.taskworker.splitting import SplittingError, split
from engine.crab.taskworker.worker import write_request
from engine.crab.wn.failure_plan import plan_json
from engine.state import StateDir

__all__ = ["DryRun", "SubmitError", "Submitted", "dry_run", "submit"]


class SubmitError(Exception):
    """A task that cannot be submitted; the message is one line, naming the file and parameter."""

    configuration = False  # refused by CRAB's client as its configuration (ConfigurationException)


class ConfigurationRefused(SubmitError):
    """A configuration CRAB's client refuses in its validateConfig, before it contacts the server:
    a script's crabCommand gets ConfigurationException."""

    configuration = True


@dataclass(frozen=True)
class Submitted:
    name: str
    task_dir: str
    notes: tuple[str, ...]  # what the user should know: a stand-in, a multi-crab script
    warnings: tuple[str, ...]  # CRAB's warnings: site lists, skipped blocks
    handle: str  # what task commands take for it: its request name while no other task has it


@dataclass(frozen=True)
class DryRun:
    """What ``crab submit --dryrun`` reports of a task: its splitting, nothing submitted."""

    algorithm: str
    units: str  # what the algorithm counts: files, lumis or events
    per_job: tuple[int, ...]  # each job's units
    notes: tuple[str, ...]
    warnings: tuple[str, ...]

    def lines(self) -> list[str]:
        """crab submit's summary of a dry run (printDryRunResults), without the estimates."""
        total, count = sum(self.per_job), len(self.per_job)
        return [f"Using {self.algorithm} splitting",
                f"Task consists of {count} jobs to process {total} {self.units}",
                f"The longest job will process {max(self.per_job)} {self.units}",
                f"The average job will process {total // count} {self.units}",
                f"The shortest job will process {min(self.per_job)} {self.units}"]


@dataclass(frozen=True)
class _Checked:
    """A configuration that passed submit's checks, and what they found."""

    spec: InputSpec
    mask: dict | None
    lists: SiteLists
    storage: object | None
    notes: list[str]
    warnings: list[str]
    uploaded: list[str]  # what CRAB's TaskWorker uploads as task warnings, which crab status shows later
    dataset: Dataset


def submit(cfg: TaskConfig, state: StateDir, db: TaskDB, pool: Mapping[str, Mapping[str, int]], *,
           now: float | None = None, user: str | None = None, backend: str = EMBEDDED,
           dryrun: bool = False) -> Submitted:
    """Record the task ``cfg`` describes for the task worker of ``backend``, or raise :class:`SubmitError`.
    ``dryrun``: recorded UPLOADED, as CRAB leaves a dry run's task until ``crab proceed``.

    ``pool`` is each site of the pool with its largest slot's ``cpus`` and ``memory`` (MB); only
    sites whose slots can hold the task's jobs count as places to run."""
    now = time.time() if now is None else now
    user = user or getpass.getuser()
    source = cfg.source
    catalogue = Catalogue.for_state(state)
    pool_sites = _pool_sites(cfg, pool)
    checked = _check(cfg, state, catalogue, pool, backend)
    spec, mask, lists, storage = checked.spec, checked.mask, checked.lists, checked.storage
    notes, warnings, uploaded = checked.notes, checked.warnings, checked.uploaded
    dataset = checked.dataset

    name = task_name(cfg.request_name, user, now)
    task_dir = state.task_dir(name)
    namesakes = sorted(t.name for t in db.tasks() if t.request_name == cfg.request_name)
    if name in namesakes:  # before anything is written: the directory is that task's
        raise SubmitError(f"{source}: General.requestName: task {name} was submitted this same second; "
                          f"submit again in a second, or change General.requestName.")
    if namesakes:  # CRAB refuses it for its project directory crab_<requestName>; here each task has its own
        notes.append(f"requestName {cfg.request_name} is also that of {', '.join(namesakes)}: task commands "
                     f"take this task by its full name, {name}.")
    stageout = (stageout_ad(storage, task_name=name, user=user, primary_dataset=cfg.primary_dataset,
                            request_name=cfg.request_name, out_lfn_dir_base=cfg.out_lfn_dir_base,
                            output_dataset_tag=cfg.output_dataset_tag)
                if storage is not None and cfg.transfer_outputs else None)
    try:
        sandbox = write_sandbox(task_dir, cfg)
    except SandboxError as e:
        raise SubmitError(f"{source}: {e}") from None
    ad = TaskAd(name=name, user=user, dataset=cfg.input_dataset or "", max_memory_mb=cfg.max_memory_mb,
                max_runtime_min=cfg.max_job_runtime_min, num_cores=cfg.num_cores, priority=cfg.priority,
                site_whitelist=cfg.site_whitelist, site_blacklist=cfg.site_blacklist, storage_site=cfg.storage_site,
                time_scale=cfg.time_scale,  # the retry budget is the task worker's (numAutomJobRetries)
                failure_plan=tuple(json.loads(plan_json(cfg.failure_plan))), sandbox=sandbox,
                script_exe=os.path.basename(cfg.script_exe) if sandbox else cfg.script_exe,
                script_args=cfg.script_args, output_files=cfg.output_files,
                extra_jdl=cfg.extra_jdl, ignore_global_blacklist=cfg.ignore_global_blacklist,
                global_blacklist=state.global_blacklist, automatic_blacklist=asdict(cfg.automatic_blacklist),
                stageout=stageout, pool_sites=tuple(pool_sites),
                publication=bool(cfg.ignored.get("Data.publication", True)), warnings=tuple(uploaded))
    write_request(task_dir, input=spec, splitting=cfg.splitting, units_per_job=cfg.units_per_job,
                  total_units=cfg.total_units, lumi_mask=mask, ad=ad, events_per_lumi=cfg.events_per_lumi,
                  mask_from=cfg.mask_from)
    try:
        db.insert(Task(name=name, request_name=cfg.request_name, user=user, status=UPLOADED if dryrun else NEW, command=SUBMIT,
                       config_path=cfg.source, task_dir=task_dir, submitted_at=now, updated_at=now, backend=backend))
    except TaskError as e:
        raise SubmitError(str(e)) from None
    if spec.stand_in:
        stand_ins.register(catalogue.directory, cfg.input_dataset)
    warnings += uploaded + lists.warnings(dataset.sites)
    return Submitted(name, task_dir, tuple(notes), tuple(warnings), name if namesakes else cfg.request_name)


def dry_run(cfg: TaskConfig, state: StateDir, pool: Mapping[str, Mapping[str, int]], *,
            backend: str = EMBEDDED) -> DryRun:
    """``crab submit --dryrun``: submit's checks, then the splitting the task worker would make;
    nothing is recorded here (the caller records the task UPLOADED with :func:`submit`).  CRAB refuses a dry run of a task with Automatic splitting."""
    if cfg.splitting == "Automatic":
        raise ConfigurationRefused(f"{cfg.source}: The 'dryrun' option is not compatible with the 'Automatic' "
                                   f"splitting mode (default). Set Data.splitting (and Data.unitsPerJob) to see the "
                                   f"jobs, or submit without --dryrun.")
    catalogue = Catalogue.for_state(state)
    checked = _check(cfg, state, catalogue, pool, backend)
    try:
        jobs = split(load_input(checked.spec.with_skipped(), catalogue), algorithm=cfg.splitting,
                     units_per_job=cfg.units_per_job, total_units=cfg.total_units, lumi_mask=checked.mask,
                     events_per_lumi=cfg.events_per_lumi, mask_from=cfg.mask_from, skipped=checked.spec.skipped)
    except (DatasetError, SplittingError) as e:
        raise SubmitError(f"{cfg.source}: Data.splitting: {e}") from None
    units = {"FileBased": ("files", lambda j: len(j.files)), "LumiBased": ("lumis", lambda j: j.nlumis),
             "EventAwareLumiBased": ("events", lambda j: j.events),
             "EventBased": ("events", lambda j: j.events)}[cfg.splitting]
    return DryRun(cfg.splitting, units[0], tuple(map(units[1], jobs)), tuple(checked.notes),
                  tuple(checked.warnings + checked.uploaded + checked.lists.warnings(checked.dataset.sites)))


def _pool_sites(cfg: TaskConfig, pool: Mapping[str, Mapping[str, int]]) -> list[str]:
    return pool_sites(pool, cfg.num_cores, cfg.max_memory_mb)


def _check(cfg: TaskConfig, state: StateDir, catalogue: Catalogue, pool: Mapping[str, Mapping[str, int]],
           backend: str) -> _Checked:
    """Submit's checks of the input, the site lists and the storage site (module docstring)."""
    pool_sites = _pool_sites(cfg, pool)
    source = cfg.source
    notes, warnings = [], list(cfg.warnings)
    uploaded: list[str] = []
    spec, note = _spec(cfg, catalogue, pool_sites)
    if note:
        notes.append(note)
    if cfg.secondary_dataset:
        notes += _secondary_note(cfg, catalogue)
    try:
        dataset = load_input(spec, catalogue)
    except DatasetError as e:
        raise SubmitError(f"{source}: Data.inputDataset: {e}") from None
    if spec.use_parent or spec.secondary:
        orphan = without_parents(dataset)
        if orphan is not None:  # CRAB's TaskWorker refuses it (DBSDataDiscovery)
            parameter = "Data.useParent" if spec.use_parent else "Data.secondaryInputDataset"
            raise SubmitError(f"{source}: {parameter}: The CRAB3 server backend refuses to submit jobs to the Grid "
                              f"scheduler because you specified useParents=True but some your files have no "
                              f"parents. Example: {orphan.lfn} ({why_none(dataset, spec.secondary)}).")
    if cfg.input_blocks:
        dataset, note = _input_blocks(cfg, dataset)
        spec = spec.with_blocks(b.name for b in dataset.blocks)
        if note:
            uploaded.append(note)
    try:
        lists = SiteLists(cfg.site_whitelist, cfg.site_blacklist, read_global_blacklist(state.global_blacklist),
                          cfg.ignore_global_blacklist)
    except SiteListError as e:
        raise SubmitError(str(e)) from None
    mask = None if cfg.job_type == "PrivateMC" else cfg.lumi_mask  # generated lumis: EventBased reads no mask
    found = locality(dataset, lists, pool_sites, mask)
    if found.blocks and not found.usable:
        request = f"{cfg.num_cores} core(s) and {cfg.max_memory_mb} MB"
        raise SubmitError(f"{source}: Site.whitelist/Site.blacklist: "
                          f"{refusal(dataset.name, found, lists, pool_sites, request, sorted(pool), backend == HTCONDOR)}")
    if found.banned or found.outside:
        uploaded.append(skipped_warning(dataset.name, found, lists))
        # the blocks the site lists ban count towards Data.totalUnits, as in CRAB; those outside the
        # pool's slots are the simulated grid's lack, not the user's choice: the units come from the rest
        spec = replace(spec.with_blocks(b.name for b in found.usable), skipped=tuple(b.name for b in found.banned))
    storage = None
    if cfg.storage_site is not None:
        try:
            storage = storage_site(state, cfg.storage_site)
        except StorageError as e:
            raise SubmitError(f"{source}: Site.storageSite: {e}") from None
    if cfg.multicrab:
        notes.append(f"{source} is a multi-crab script: crabtui task submit submits its module-level config "
                     f"only ({_what(cfg)}), not what its __main__ block would submit; 'crabtui task submit "
                     f"--multicrab {source}' runs that block and submits each config it passes to "
                     f"crabCommand('submit').")
    return _Checked(spec, mask, lists, storage, notes, warnings, uploaded, dataset)


def _spec(cfg: TaskConfig, catalogue: Catalogue, pool_sites: list[str]) -> tuple[InputSpec, str | None]:
    """Where the task's input comes from, and the note a stand-in deserves."""
    pool = tuple(pool_sites)
    if cfg.job_type == "PrivateMC":
        return InputSpec(events=int(cfg.total_units), events_per_job=cfg.units_per_job,
                         events_per_lumi=cfg.events_per_lumi, sites=pool, processing_sites=pool), None
    if cfg.user_input_files:
        return InputSpec(user_files=cfg.user_input_files, sites=pool, processing_sites=pool), None
    name = cfg.input_dataset
    sites = pool if cfg.ignore_locality else None
    pairing = {"use_parent": cfg.use_parent, "secondary": cfg.secondary_dataset}
    try:
        catalogue.load(name)
    except UnknownDataset as e:
        d = stand_ins.load(catalogue, name, stand_in=True)
        close = f" (did you mean {' or '.join(repr(s) for s in e.suggestions)}?)" if e.suggestions else ""
        note = (f"{cfg.source}: Data.inputDataset {name} is not in the dataset catalogue{close}; the task reads a "
                f"synthetic stand-in made from its name: {d.nfiles} files, {d.lumis} lumis, {d.events} events at "
                f"{', '.join(d.sites)}. To read a real description instead: crabtui dataset add {name} --from "
                f"FILE (the JSON format is in the README).")
        return InputSpec(dataset=name, stand_in=True, sites=sites, processing_sites=pool, **pairing), note
    except DatasetError as e:
        raise SubmitError(f"{cfg.source}: Data.inputDataset: {e}") from None
    return InputSpec(dataset=name, sites=sites, processing_sites=pool, **pairing), None


def _secondary_note(cfg: TaskConfig, catalogue: Catalogue) -> list[str]:
    """What the user should know of a secondary dataset the catalogue does not know."""
    name = cfg.secondary_dataset
    try:
        catalogue.load(name)
    except UnknownDataset:
        return [f"{cfg.source}: Data.secondaryInputDataset {name} is not in the dataset catalogue; each input file "
                f"is paired with files made up to hold its lumis, under {stand_ins.definition(name).lfn_base}/. To "
                f"pair it with a real description instead: crabtui dataset add {name} --from FILE."]
    except DatasetError as e:
        raise SubmitError(f"{cfg.source}: Data.secondaryInputDataset: {e}") from None
    return []


def _input_blocks(cfg: TaskConfig, dataset: Dataset) -> tuple[Dataset, str | None]:
    """The dataset's blocks ``Data.inputBlocks`` names; refused if it names none of them.  A stand-in's
    blocks are made up, so the blocks of the real dataset it names (its ``<dataset>#`` ones) take its
    first blocks it does not name, one each, in the order given: a config written for DAS's block ids
    reads as many blocks as it names."""
    wanted = set(cfg.input_blocks)
    stand_in = dataset.source == stand_ins.STAND_IN
    held = {b.name for b in dataset.blocks}
    taken: dict[str, str] = {}  # a stand-in's block name -> the block of the real dataset it stands for
    if stand_in:
        ours = [n for n in dict.fromkeys(cfg.input_blocks) if n not in held and n.startswith(f"{dataset.name}#")]
        spare = [b.name for b in dataset.blocks if b.name not in wanted]
        taken = dict(zip(spare, ours))
    kept = tuple(b for b in dataset.blocks if b.name in wanted or b.name in taken)
    unknown = sorted(wanted - held - set(taken.values()))
    what = "a synthetic stand-in" if stand_in else "the catalogue's"
    if not kept:
        raise SubmitError(f"{cfg.source}: Data.inputBlocks: none of its {len(wanted)} block(s) is a block of dataset "
                          f"{dataset.name} ({what}, with {len(dataset.blocks)} blocks: 'crabtui dataset show "
                          f"{dataset.name}' lists them).")
    notes = [f"Data.inputBlocks: {len(unknown)} of its blocks are not blocks of dataset {dataset.name} ({what}) and "
             f"are left out: {', '.join(unknown[:3])}{' ...' if len(unknown) > 3 else ''}."] if unknown else []
    if taken:
        pairs = ", ".join(f"{mine.split('#', 1)[1]} for {real.split('#', 1)[1]}" for mine, real in list(taken.items())[:3])
        notes.insert(0, f"Data.inputBlocks: {dataset.name} is a synthetic stand-in, whose blocks are made up: "
                        f"{len(taken)} of its blocks stand in for the {len(taken)} it names that it does not hold "
                        f"({pairs}{' ...' if len(taken) > 3 else ''}).")
    return Dataset(dataset.name, kept, dataset.source), " ".join(notes) or None


def _what(cfg: TaskConfig) -> str:
    if cfg.job_type == "PrivateMC":
        source = f"{cfg.total_units} generated events"
    elif cfg.user_input_files:
        source = f"{len(cfg.user_input_files)} user input files"
    else:
        source = cfg.input_dataset
    return f"requestName {cfg.request_name}, {source}"
