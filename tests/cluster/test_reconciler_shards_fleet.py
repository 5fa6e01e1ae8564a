"""Three `omereconcile run --shards` processes roll a catalog change over a fleet in 30 namespaces (120
replicas in CI; ``OMERECONCILE_FLEET_PER_NS=10`` runs 300) on the real control plane; mid-roll one is SIGKILLed, one paused (SIGSTOP) past its Leases and resumed, and
a fourth joins (issue 31), with the API server's ShardedListAndWatch gate on and off. Who wrote what is read from the API server's audit log, not from the
processes' own logs: each process sends its own User-Agent (``omereconcile/IDENTITY``).

What users rely on, checked here:

- every replica rolls exactly once (one new pod created and one old pod deleted per replica, even for the
  replicas whose roll the killed process had started);
- a namespace's replicas are written only by the process holding its range, inside the window its range
  Lease writes give it (from its take to its release, or to its last renewal plus the renew deadline: the
  fence), and the windows of two processes on one range never overlap;
- the killed and the paused process's ranges move once their Leases expire (not before, and within a
  few rounds after); the paused one, resumed with passes in flight, writes nothing to the ranges it lost
  (the fence: a run with the fence removed fails the window check);
- no replica drops below its floor of serving Instances at any moment of the roll (a pod watch checks
  the replica after every pod event);
- the fourth process gets its share of the ranges.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from reconciler_proc import REPO, Reconciler

from omereconcile.sharding import parse_cuts
from testbed.audit import audit_args, audit_time, read_audit
from testbed.rawkube import is_gone
from testbed.testing import Cluster, running_cluster, wait_for

SHARDS = 12
LEASE, DEADLINE, RETRY = 6.0, 4.0, 1.0  # short, so expiry takes seconds; fencing needs DEADLINE < LEASE
FLEET = [f"fleet3-{i:02d}" for i in range(30)]
# Replicas per namespace: 4 in CI (120 replicas); 300 (10 per namespace) take over 10 minutes on two busy
# cores, so that size is a run of its own (docs/reconciler.md, "Sharding").
PER_NS = int(os.environ.get("OMERECONCILE_FLEET_PER_NS", "4"))
SLOW = max(1.0, PER_NS / 4)  # the settle and roll waits grow with the fleet
REPLICAS = [f"r{k}" for k in range(PER_NS)]  # pod names are REPLICA-engine-...: no name prefixes another
IREP = "/apis/ome.io/v1beta1/namespaces/{ns}/inferencereplicas"
RUNTIME = "/apis/ome.io/v1beta1/clusterservingruntimes/vllm-llama-3-2-1b-instruct"
MODEL_NODE_LABEL = "models.ome.io/clusterbasemodel.llama-3-2-1b-instruct"
GATE = "ome.io/serving"
V1, V2 = "docker.io/vllm/vllm-openai:v0.9.0.1", "docker.io/vllm/vllm-openai:v0.9.2"
WORKERS = 4  # --workers: at most one write in flight per worker
SLACK = 1.0  # seconds between a fence check and the API server receiving the write, on 2 busy cores


@pytest.fixture(scope="module", params=[True, False], ids=["gate-on", "gate-off"])
def fleet(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Cluster, Path, Path]]:
    """A control plane with kubelets (the gate on or off, the audit log on), deploy/'s RBAC (the Leases
    of --shards=12 included), the example catalog, a TokenRequest kubeconfig for the reconciler's
    ServiceAccount, and PER_NS catalog replicas in each FLEET namespace."""
    gate = f"--feature-gates=ShardedListAndWatch={'true' if request.param else 'false'}"
    run = tmp_path_factory.mktemp("fleet3")
    audit = run / "audit"
    with running_cluster(
        run / "cp",
        nodes=4,
        gang_scheduler=False,
        apiserver_args=(gate, *audit_args(audit)),
        gpus_per_node=200,
        cpu="4000",
        memory="16000Gi",
        max_pods=250,
    ) as cl:
        base = REPO / "deploy" / "base"  # its RBAC names every Lease of --shards=12
        files = [base / "namespace.yaml", base / "serviceaccount.yaml", base / "rbac.yaml"]
        cl.kubectl("apply", *(a for f in files for a in ("-f", str(f))))
        cl.kubectl("apply", "-f", str(REPO / "examples" / "catalog"))
        cl.kubectl("label", "nodes", "--all", "--overwrite", f"{MODEL_NODE_LABEL}=Ready")
        for f in sorted((REPO / "examples" / "catalog").glob("*.yaml")):
            doc = yaml.safe_load(f.read_text())
            if doc.get("status"):
                cl.raw.patch(
                    f"/apis/ome.io/v1beta1/{doc['kind'].lower()}s/{doc['metadata']['name']}/status",
                    {"status": doc["status"]},
                )
        kubeconfig = cl.cp.service_account_kubeconfig("ome", "omereconcile", create=False)
        for ns in FLEET:
            cl.raw.post(
                "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
            )
            for name in REPLICAS:
                cl.raw.post(
                    IREP.format(ns=ns),
                    {
                        "apiVersion": "ome.io/v1beta1",
                        "kind": "InferenceReplica",
                        "metadata": {"name": name, "namespace": ns},
                        "spec": {
                            "component": "engine",
                            "modelRef": {"name": "llama-3-2-1b-instruct"},
                            "replicas": 1,
                        },
                    },
                )
        yield cl, kubeconfig, audit


# -- observing the fleet ------------------------------------------------------------------------------------


def _serving(pod: dict[str, Any]) -> bool:
    conds = {c.get("type"): c.get("status") for c in (pod.get("status") or {}).get("conditions") or []}
    return conds.get(GATE) == "True" and conds.get("Ready") == "True"


def _replica_of(pod: dict[str, Any]) -> tuple[str, str]:
    return pod["metadata"]["namespace"], pod["metadata"]["labels"]["ome.io/inferenceservice"]


class FloorWatch:
    """Watches every replica pod of the fleet and, after each pod event, counts the Instances of that
    event's replica serving (a pod Ready with the serving gate True): the lowest count per replica."""

    def __init__(self, cl: Cluster) -> None:
        self.cl = cl
        self.pods: dict[str, dict[str, Any]] = {}
        self.minimum: dict[tuple[str, str], int] = {}
        self.events = 0
        self.images: dict[tuple[str, str], set[str]] = defaultdict(set)
        self.uids: dict[tuple[str, str], set[str]] = defaultdict(set)
        self._stop = threading.Event()
        self._resp: Any = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.error: BaseException | None = None

    def _count(self, key: tuple[str, str]) -> int:
        return len(
            {
                p["metadata"]["labels"].get("ome.io/instance-index")
                for p in self.pods.values()
                if _replica_of(p) == key and _serving(p)
            }
        )

    def _see(self, key: tuple[str, str]) -> None:
        n = self._count(key)
        self.minimum[key] = min(self.minimum.get(key, n), n)

    def _run(self) -> None:
        try:
            listed = self.cl.raw.get("/api/v1/pods", labelSelector="ome.io/inferenceservice")
            self.pods = {p["metadata"]["uid"]: p for p in listed["items"]}
            for p in self.pods.values():
                self.uids[_replica_of(p)].add(p["metadata"]["uid"])
            for key in {_replica_of(p) for p in self.pods.values()}:
                self._see(key)
            rv = listed["metadata"]["resourceVersion"]
            while not self._stop.is_set():
                for ev in self.cl.raw.watch(
                    "/api/v1/pods",
                    resource_version=rv,
                    timeout_seconds=600,
                    on_open=lambda r: setattr(self, "_resp", r),
                    labelSelector="ome.io/inferenceservice",
                ):
                    if is_gone(ev):
                        raise AssertionError("the floor watch expired (410): the floor cannot be judged")
                    obj = ev["object"]
                    rv = obj["metadata"]["resourceVersion"]
                    if ev["type"] == "BOOKMARK":
                        continue
                    if ev["type"] == "DELETED":
                        self.pods.pop(obj["metadata"]["uid"], None)
                    else:
                        self.pods[obj["metadata"]["uid"]] = obj
                        self.images[_replica_of(obj)].add(obj["spec"]["containers"][0]["image"])
                    self.uids[_replica_of(obj)].add(obj["metadata"]["uid"])
                    self.events += 1
                    self._see(_replica_of(obj))
        except BaseException as exc:  # reported by the test
            if not self._stop.is_set():
                self.error = exc

    def __enter__(self) -> FloorWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._resp is not None:
            with contextlib.suppress(Exception):  # best effort: the thread is a daemon
                self._resp.shutdown()
        self._thread.join(10)


def _unrolled(cl: Cluster, image: str) -> list[str]:
    """The replicas not yet settled (Ready, at their update revision, spec observed, no operation) with
    every live pod running ``image``, each with why."""
    images: dict[tuple[str, str], set[str]] = defaultdict(set)
    for p in cl.raw.get("/api/v1/pods", labelSelector="ome.io/inferenceservice")["items"]:
        if not p["metadata"].get("deletionTimestamp"):
            images[_replica_of(p)].add(p["spec"]["containers"][0]["image"])
    out = []
    for obj in cl.raw.get("/apis/ome.io/v1beta1/inferencereplicas")["items"]:
        st = obj.get("status") or {}
        key = (obj["metadata"]["namespace"], obj["metadata"]["name"])
        ready = any(
            c.get("type") == "Ready" and c.get("status") == "True" for c in st.get("conditions") or []
        )
        rows = st.get("instanceStatuses") or []
        why = [
            w
            for w, bad in (
                ("not Ready", not ready),
                ("rolling", st.get("currentRevision") != st.get("updateRevision")),
                ("spec not observed", st.get("observedGeneration") != obj["metadata"]["generation"]),
                (f"{len(rows)} Instance rows", len(rows) != 1),
                ("an operation in flight", any(r.get("operation") for r in rows)),
                (f"pods running {sorted(images.get(key, ()))}", images.get(key) != {image}),
            )
            if bad
        ]
        if why:
            out.append(f"{key[0]}/{key[1]}: {', '.join(why)}")
    return out


def _rolled(cl: Cluster, image: str) -> int:
    """How many replicas are settled with every live pod running ``image``."""
    return len(FLEET) * PER_NS - len(_unrolled(cl, image))


def _wait_rolled(rec: Reconciler, cl: Cluster, image: str, timeout: float) -> None:
    left: list[list[str]] = [[]]

    def done() -> bool:
        left[0] = _unrolled(cl, image)
        return not left[0]

    try:
        rec.wait(f"every replica settled on {image}", done, timeout=timeout, interval=2)
    except AssertionError as exc:
        raise AssertionError(f"{len(left[0])} replicas not settled, e.g. {left[0][:8]}\n{exc}") from None


def _identity(rec: Reconciler) -> str:
    return rec.wait(
        "its identity",
        lambda: next((str(r["identity"]) for r in rec.lines() if r.get("msg") == "probes listening"), None),
    )


def _holders(cl: Cluster, ids: dict[str, str]) -> dict[int, str]:
    items = cl.raw.get("/apis/coordination.k8s.io/v1/namespaces/ome/leases")["items"]
    by_name = {o["metadata"]["name"]: o["spec"].get("holderIdentity") or "" for o in items}
    return {i: ids.get(by_name.get(f"omereconcile-shard-{SHARDS}-{i}", ""), "") for i in range(SHARDS)}


def _share(holders: dict[int, str], procs: list[str]) -> bool:
    counts = Counter(holders.values())
    want = sorted([SHARDS // len(procs) + (1 if k < SHARDS % len(procs) else 0) for k in range(len(procs))])
    return set(counts) == set(procs) and sorted(counts.values()) == want


# -- reading the audit log ---------------------------------------------------------------------------------


def _windows(events: list[dict[str, Any]], who: dict[str, str]) -> dict[int, list[tuple[float, float, str]]]:
    """Per range, when each process may have acted on it, from its range Lease's successful writes as the
    API server recorded them: a window opens at a write claiming the Lease for a process and is extended
    by its renewals to the last one plus the renew deadline (the fence: the process stops acting then),
    or closed by its release (a write of an empty holder)."""
    names = {f"omereconcile-shard-{SHARDS}-{i}": i for i in range(SHARDS)}
    out: dict[int, list[list[Any]]] = defaultdict(list)
    for ev in events:
        ref = ev.get("objectRef") or {}
        if ref.get("resource") != "leases" or ref.get("name") not in names:
            continue
        if not 200 <= int((ev.get("responseStatus") or {}).get("code") or 0) < 300:
            continue
        writer = who.get(str(ev.get("userAgent")))
        holder = str(((ev.get("requestObject") or {}).get("spec") or {}).get("holderIdentity") or "")
        if writer is None:
            continue
        i, t = names[ref["name"]], audit_time(ev)
        spans = out[i]
        open_span = spans[-1] if spans and spans[-1][3] else None
        if holder:
            assert holder_ok(holder, writer, who), (ev, writer)
            if open_span is not None and open_span[2] == writer:
                open_span[1] = t + DEADLINE
            else:
                if open_span is not None:  # the previous holder's fence: closed by its last renewal
                    open_span[3] = False
                spans.append([t, t + DEADLINE, writer, True])
        elif open_span is not None and open_span[2] == writer:
            open_span[1] = min(open_span[1], t)
            open_span[3] = False
    return {i: [(s, e, w) for s, e, w, _ in spans] for i, spans in out.items()}


def holder_ok(holder: str, writer: str, who: dict[str, str]) -> bool:
    """A process writes only its own identity as holder."""
    return any(who[ua] == writer and ua.endswith("/" + holder) for ua in who)


def test_three_processes_roll_a_fleet_one_killed_mid_roll_a_fourth_joins_never_two_actors(
    fleet: tuple[Cluster, Path, Path], tmp_path: Path
) -> None:
    cl, kubeconfig, audit = fleet
    started = time.monotonic()
    args = [
        "--shards", str(SHARDS), "--ome-namespace", "ome", "--watch-timeout", "60", "--workers", str(WORKERS),
        "--lease-duration", str(LEASE), "--renew-deadline", str(DEADLINE), "--retry-period", str(RETRY),
    ]  # fmt: skip
    recs: dict[str, Reconciler] = {}
    ids: dict[str, str] = {}  # Lease identity -> process name
    try:
        for name in ("a", "b", "c"):
            recs[name] = Reconciler(kubeconfig, tmp_path / f"{name}.log", args).start()
        for name, rec in recs.items():
            ids[_identity(rec)] = name
        a = recs["a"]
        a.wait("the ranges shared 4/4/4", lambda: _share(_holders(cl, ids), ["a", "b", "c"]), timeout=90)
        total = len(FLEET) * PER_NS
        _wait_rolled(a, cl, V1, timeout=300 * SLOW)

        with FloorWatch(cl) as floor:
            wait_for("the floor watch's first list", lambda: len(floor.minimum) == total, timeout=30)
            assert min(floor.minimum.values()) == 1, "a replica is not serving before the roll"
            rolled_from = time.time()
            runtime = cl.raw.get(RUNTIME)
            runtime["spec"]["engineConfig"]["runner"]["image"] = V2
            cl.raw.put(RUNTIME, runtime)

            # Mid-roll (a third of the replicas have their new pod, as the watch saw): SIGKILL b (no
            # release) and SIGSTOP c (a pause: GC, a partition) with passes in flight. Their ranges move
            # only once their Leases expired; a fourth process, d, joins at once.
            a.wait(
                "a third of the replicas to have a new pod",
                lambda: sum(V2 in imgs for imgs in list(floor.images.values())) >= total // 3,
                timeout=180 * SLOW,
                interval=0.2,
            )
            held = _holders(cl, ids)
            recs["b"].kill()
            os.kill(recs["c"].pid, signal.SIGSTOP)
            killed = time.time()
            at_kill = _rolled(cl, V2)
            assert at_kill < total, "the roll ended before the kill: nothing was left for b's ranges"
            moved_ranges = {i for i, w in held.items() if w in ("b", "c")}
            recs["d"] = Reconciler(kubeconfig, tmp_path / "d.log", args).start()
            ids[_identity(recs["d"])] = "d"
            moved = a.wait(
                "b's and c's ranges taken by a and d",
                lambda: time.time() if set(_holders(cl, ids).values()) <= {"a", "d"} else None,
                timeout=60,
                interval=0.2,
            )
            # c resumes: its workers wake mid-pass, but its fence closed (no renewal within the renew
            # deadline) before its Leases expired, so it writes nothing to the ranges it lost; then it
            # rejoins and the ranges rebalance. Without the fence its passes would write on (the audit
            # checks below catch that: writes outside c's windows, two actors on a range).
            resumed = time.time()
            os.kill(recs["c"].pid, signal.SIGCONT)
            a.wait(
                "the ranges shared 4/4/4 by a, c and d",
                lambda: _share(_holders(cl, ids), ["a", "c", "d"]),
                timeout=90,
            )
            shared = _rolled(cl, V2)
            _wait_rolled(a, cl, V2, timeout=300 * SLOW)
        assert floor.error is None, floor.error
        wall = time.monotonic() - started

        # The serving floor: every replica kept one serving Instance (SurgeThenDrain, 1 Instance) after
        # every pod event of the roll, and the watch saw each replica's new pods, so it watched the roll.
        low = {k: v for k, v in floor.minimum.items() if v < 1}
        assert not low, f"replicas below their floor of 1 serving Instance: {sorted(low)[:10]}"
        assert all({V1, V2} <= floor.images[(ns, r)] for ns in FLEET for r in REPLICAS)

        assert moved_ranges

        # -- the audit log: who wrote what ------------------------------------------------------------------
        events = list(read_audit(audit))
        who: dict[str, str] = {f"omereconcile/{ident}": name for ident, name in ids.items()}
        windows = _windows(events, who)
        cuts = cl.raw.get(
            f"/apis/coordination.k8s.io/v1/namespaces/ome/leases/omereconcile-shard-{SHARDS}-cuts"
        )
        ranges = parse_cuts(cuts["metadata"]["annotations"]["omereconcile.ome.io/shard-cuts"], SHARDS)
        range_of = {ns: next(i for i, r in enumerate(ranges) if r.contains(ns)) for ns in FLEET}
        writes = [
            ev
            for ev in events
            if (ev.get("objectRef") or {}).get("namespace") in FLEET and str(ev.get("userAgent")) in who
        ]
        assert writes, "no write by a reconciler process in the audit log"
        # Every write inside its writer's window on the namespace's range, but the ones the paused
        # process had in flight: a worker that checked the fence just before SIGSTOP sends its request
        # after SIGCONT. Lease fencing cannot close that window (client-go's leader election has it too);
        # what it guarantees is that no *further* write follows: at most one such write per worker, one
        # per replica, each received right after the resume. With the fence removed the resumed process's
        # passes write on (several writes per replica) and this fails.
        outside: list[tuple[str, str, str, str, str, float]] = []
        for ev in writes:
            t, w, ns = audit_time(ev), who[str(ev["userAgent"])], ev["objectRef"]["namespace"]
            if not any(wr == w and s <= t <= e + SLACK for s, e, wr in windows.get(range_of[ns], [])):
                ref = ev["objectRef"]
                outside.append(
                    (w, ns, ev["verb"], str(ref.get("resource")), str(ref.get("name")), t - resumed)
                )
        in_flight = [o for o in outside if o[0] == "c" and 0 <= o[5] <= 2 * SLACK]
        per_replica = Counter((o[1], o[4].split("-engine-")[0].split(".")[0]) for o in in_flight)
        assert len(in_flight) <= WORKERS, in_flight
        assert max(per_replica.values(), default=0) <= 1, in_flight
        late = [o for o in outside if o not in in_flight]
        assert not late, f"{len(late)} writes outside their writer's range window, e.g. {late[:5]}"
        # The killed and the paused process's ranges moved once their Leases expired, not before (from
        # the holder's last renewal of that range to the taker's claim, as the API server recorded them),
        # and promptly: within a few rounds after the holder's last round (rounds run late on 2 busy
        # cores: 10 s of slack). The last round, not the range's own renewal: a range goes beyond a live
        # process's fair share only once the holder's member Lease expired too (sharding/ownership.py,
        # "Fair share"), and a process killed partway through a round's writes leaves the ranges it had
        # not reached yet renewed one round earlier (4 s earlier under load: 16.2 s from that renewal,
        # 12.6 s from the last round, in a run that failed the bound measured the first way).
        lease_writes = [
            (audit_time(ev), who[str(ev["userAgent"])])
            for ev in events
            if (ev.get("objectRef") or {}).get("resource") == "leases"
            and str(ev["objectRef"].get("name", "")).startswith(f"omereconcile-shard-{SHARDS}-")
            and str(ev.get("userAgent")) in who
            and 200 <= int((ev.get("responseStatus") or {}).get("code") or 0) < 300
        ]
        waits, prompt = [], []
        for i in moved_ranges:
            spans = windows[i]
            k = max(n for n, (st, _e, w) in enumerate(spans) if w == held[i] and st <= killed)
            assert k + 1 < len(spans), (i, spans)
            last_renewal, taken = spans[k][1] - DEADLINE, spans[k + 1][0]
            waits.append(taken - last_renewal)
            last_round = max(t for t, w in lease_writes if w == held[i] and t < taken)
            prompt.append(taken - last_round)
        assert min(waits) >= LEASE - 0.5, sorted(waits)
        assert max(prompt) <= LEASE + 10, sorted(prompt)
        # Never two processes' windows on one range at once.
        for i, spans in windows.items():
            for (_s1, e1, w1), (s2, _e2, w2) in itertools.pairwise(spans):
                assert w1 == w2 or s2 >= e1, (i, spans)
        # Every range changed hands at least once in the run (the kill, the join): the check above bit.
        assert sum(len({w for _, _, w in spans}) > 1 for spans in windows.values()) >= len(moved_ranges)
        # Each replica rolled once: the pod watch saw exactly two pods of it (the old and one new), and
        # the audit log shows no second pod create or delete by the reconcilers during the roll. A write
        # may succeed on the server yet answer 504 under load, so that one is counted too, except a
        # create whose pod name another create later made (201): had the 504 made it, that one would
        # have met AlreadyExists.
        assert {k: len(v) for k, v in floor.uids.items() if len(v) != 2} == {}
        made = {
            (ev["objectRef"]["namespace"], ev["objectRef"]["name"])
            for ev in writes
            if ev["verb"] == "create"
            and ev["objectRef"].get("resource") == "pods"
            and not ev["objectRef"].get("subresource")
            and int((ev.get("responseStatus") or {}).get("code") or 0) < 300
        }
        pod_ops: Counter[tuple[str, str, str]] = Counter()
        for ev in writes:
            ref = ev["objectRef"]
            code = int((ev.get("responseStatus") or {}).get("code") or 0)
            pod = ref.get("resource") == "pods" and not ref.get("subresource")
            timed_out = code == 504 and not (
                ev["verb"] == "create" and (ref["namespace"], ref["name"]) in made
            )
            if pod and audit_time(ev) >= rolled_from and (code < 300 or timed_out):
                pod_ops[(ev["verb"], ref["namespace"], str(ref["name"]).split("-engine-")[0])] += 1
        twice = {k: n for k, n in pod_ops.items() if n != 1}
        assert not twice, f"replicas whose pods were created or deleted more than once: {sorted(twice)[:10]}"
        writers = Counter(who[str(ev["userAgent"])] for ev in writes if audit_time(ev) >= rolled_from)
        assert {"a", "b", "c"} <= set(writers), writers
        if shared < total:  # d held its share while replicas were still rolling: it wrote some of them
            assert "d" in writers, writers
        print(
            f"\nfleet roll: {wall:.0f} s wall; rolled at the kill {at_kill}, when d had its share {shared} of "
            f"{total}; ranges moved {min(waits):.1f}-{max(waits):.1f} s after their last renewal, "
            f"{min(prompt):.1f}-{max(prompt):.1f} s after their holder's last round (all taken "
            f"{moved - killed:.1f} s after the kill and the pause); writes in the roll by process "
            f"{dict(writers)}; pod events watched {floor.events}; writes in flight across the pause {in_flight}"
        )
    finally:
        if recs.get("c") is not None and recs["c"].alive():
            os.kill(recs["c"].pid, signal.SIGCONT)
        for rec in recs.values():
            rec.stop()
