"""The DAGs' jobs in the queue, followed through their logs instead of asked of the schedd at every
refresh, as condor_watch_q follows jobs: on a schedd of 100,000 jobs, a query a second of every
node job would be a load of its own.  Nothing here imports textual.

Each DAGMan job's own log (its ``UserLog``) tells when it is held, released or leaves the queue,
and each DAG's nodes log (``<dag>.nodes.log``, which every node job writes to) what its node jobs
do; both are followed with :class:`engine.schedd.local.userlog.QueueFollower`, over one query's
answer.  The schedd is asked again only for what the logs do not tell: the DAGMan jobs every
:data:`DISCOVER_EVERY` seconds (new DAGs, and DAGMan's ad, which DAGMan itself refreshes only every
5 minutes) or as soon as one leaves the queue (the history has it then), a shown DAGMan job whose own
log cannot be followed from here every :data:`BLIND_EVERY` seconds, and a DAG's node jobs when
its nodes log cannot be followed from here (a DAG on a pool whose directory this machine does not
see, or a new run of DAGMan that emptied its log), then at most every :data:`DISCOVER_EVERY` seconds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from engine.schedd.local.userlog import QueueFollower

DISCOVER_EVERY = 30.0
"""Seconds from a query's answer of the DAGMan jobs to the next while their logs are followed
(ctrl+r asks at once), as often as the list reads the history for DAGs that ended."""
BLIND_EVERY = 5.0
"""Seconds between two queries of a shown DAGMan job whose ad is all there is to go by: its own
log, or its dagman.out, cannot be read from here (DAGMan's default DAGMAN_USER_LOG_SCAN_INTERVAL)."""


def nodes_log(dag_file: str) -> str:
    """The log DAGMan gives its node jobs (``DAGManNodesLog``): beside the DAG, on both backends."""
    return dag_file + ".nodes.log"


class DagQueue:
    """The DAGMan jobs and the node jobs of the DAGs shown, as the queue holds them now.
    ``discover_every``: how old the last query of the DAGMan jobs may get."""

    def __init__(self, discover_every: float = DISCOVER_EVERY, blind_every: float = BLIND_EVERY) -> None:
        self.discover_every = discover_every
        self.blind_every = blind_every
        self._ads: dict[int, dict[str, Any]] = {}  # DAGMan jobs as last queried, by ClusterId
        self._ad_asked_at: dict[int, float] = {}
        self._dagmans: dict[int, QueueFollower] = {}  # their own logs
        self._listed: list[int] = []  # the DAGMan jobs of the last query of :meth:`dagmans`
        self._answered_at: float | None = None  # when the last query of the DAGMan jobs was answered
        self._left = False  # a DAGMan job of the list left the queue since
        self.discoveries = 0  # queries of the DAGMan jobs so far
        self._nodes: dict[int, QueueFollower] = {}  # by DAGMan job: its nodes log
        self._seeded_at: dict[int, float] = {}
        self._lists: dict[int, tuple[int, list[dict[str, Any]]]] = {}  # node jobs by DAG, as last listed

    # -------------------------------------------------------------- the DAGMan jobs

    def dagmans(self, schedd: Any, constraint: str, projection: Sequence[str], now: float,
                force: bool = False, clock: Callable[[], float] | None = None) -> list[dict[str, Any]]:
        """The DAGMan jobs ``constraint`` selects, as their logs tell since the last query; the
        query again once its answer is ``discover_every`` old (``clock`` tells when the answer
        came, ``now`` when not given: on a busy schedd, seconds after the question), when one
        of them left the queue, or with ``force``."""
        answered = self._answered_at
        if force or self._left or answered is None or not -self.discover_every < now - answered < self.discover_every:
            marks = {cluster: f.mark() for cluster, f in self._dagmans.items()}
            ads = schedd.query_values(constraint, projection)
            self._answered_at, self._left = clock() if clock is not None else now, False
            self.discoveries += 1
            for ad in ads:
                self.follow_dagman(ad, now, marks.get(int(ad["ClusterId"])))
            self._listed = [int(ad["ClusterId"]) for ad in ads]
        shown = []
        for cluster in self._listed:
            ad = self.dagman(cluster)
            if ad is None:
                self._left = True  # its last event took it out of the queue: the next call asks
            else:
                shown.append(ad)
        return shown

    def follow_dagman(self, ad: Mapping[str, Any], now: float, mark: tuple[int | None, int] | None = None) -> None:
        """Follow a DAGMan job from its ad (as queried at ``now``) on, through its own log from
        ``mark`` (from its start if None: one job's log is short, and the last event in it tells
        the job's status, or leaves the ad's when none does, as for a job submitted on hold)."""
        cluster = int(ad["ClusterId"])
        self._ads[cluster] = dict(ad)
        self._ad_asked_at[cluster] = now
        log = ad.get("UserLog")
        if not log:
            self._dagmans.pop(cluster, None)
            return
        follower = self._dagmans.get(cluster)
        if follower is None or follower.path != log:
            follower = self._dagmans[cluster] = QueueFollower(str(log))
        follower.seed([ad], mark or (follower.mark()[0], 0))

    def dagman(self, cluster: int) -> dict[str, Any] | None:
        """A followed DAGMan job's ad with what its log told since (None once it has left the
        queue, or if it is not followed)."""
        ad = self._ads.get(cluster)
        follower = self._dagmans.get(cluster)
        if ad is None or follower is None:
            return ad
        follower.read()
        if follower.stale:  # its log cannot be read from here: the last query's ad
            return ad
        now = follower.jobs.get((cluster, 0))
        if now is None:
            del self._ads[cluster], self._dagmans[cluster], self._ad_asked_at[cluster]
        return now

    def blind(self, cluster: int, now: float, counts_from_ad: bool = False) -> bool:
        """Whether a shown DAGMan job's ad should be queried again: the last query is
        ``blind_every`` old, and its status comes from the ad alone (its log cannot be followed
        from here: none, or in a directory this machine does not see) or DAGMan's node counts do
        (``counts_from_ad``: its dagman.out cannot be read from here)."""
        follower = self._dagmans.get(cluster)
        if not counts_from_ad and follower is not None and not follower.stale:
            return False
        asked = self._ad_asked_at.get(cluster)
        return asked is None or not 0 <= now - asked < self.blind_every

    # -------------------------------------------------------------- the node jobs

    def node_jobs(self, schedd: Any, dags: Mapping[int, str], projection: Sequence[str], now: float,
                  seed: bool = True) -> dict[int, list[dict[str, Any]]]:
        """The node jobs in the queue of each DAG of ``dags`` (DAGMan job -> DAG file), from its
        nodes log; those of DAGs not followed yet, or whose log cannot be followed, from one
        query for all of them (the latter at most every ``discover_every`` seconds), unless not
        ``seed``: then they have none until a later call."""
        to_seed = []
        for cluster, dag_file in dags.items():
            follower = self._nodes.get(cluster)
            if follower is None or follower.path != nodes_log(dag_file):
                follower = self._nodes[cluster] = QueueFollower(nodes_log(dag_file), {"DAGManJobId": cluster})
                self._seeded_at.pop(cluster, None)
            follower.read()
            seeded_at = self._seeded_at.get(cluster)
            if seeded_at is None or (follower.stale and not 0 <= now - seeded_at < self.discover_every):
                to_seed.append(cluster)
        if to_seed and seed:
            marks = {cluster: self._nodes[cluster].mark() for cluster in to_seed}
            constraint = (f"DAGManJobId == {to_seed[0]}" if len(to_seed) == 1 else
                          f"member(DAGManJobId, {{{', '.join(map(str, to_seed))}}})")
            by_dag: dict[int, list[Mapping[str, Any]]] = {cluster: [] for cluster in to_seed}
            for ad in schedd.query_values(constraint, projection):
                by_dag[int(ad["DAGManJobId"])].append(ad)
            for cluster in to_seed:
                self._nodes[cluster].seed(by_dag[cluster], marks[cluster])
                self._nodes[cluster].read()
                self._seeded_at[cluster] = now
        return {cluster: self._listed_jobs(cluster) for cluster in dags}

    def _listed_jobs(self, cluster: int) -> list[dict[str, Any]]:
        follower = self._nodes[cluster]
        cached = self._lists.get(cluster)
        if cached is None or cached[0] != follower.version:
            cached = self._lists[cluster] = (follower.version, list(follower.jobs.values()))
        return cached[1]

    def version(self, cluster: int) -> tuple[int, int]:
        """Changes with what :meth:`dagman` and :meth:`node_jobs` give for a DAGMan job."""
        dagman, nodes = self._dagmans.get(cluster), self._nodes.get(cluster)
        return (dagman.version if dagman is not None else -1, nodes.version if nodes is not None else -1)

    def forget(self, keep: set[int]) -> None:
        """Stop following the DAGs whose DAGMan job is not in ``keep``."""
        for followed in (self._nodes, self._seeded_at, self._lists, self._dagmans, self._ads, self._ad_asked_at):
            for cluster in [c for c in followed if c not in keep]:
                del followed[cluster]
