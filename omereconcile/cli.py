"""``omereconcile run`` (the reconciler process) and ``omereconcile plan`` (a dry-run of the next pass).

Exit codes: 0 done or stopped by SIGTERM/SIGINT, 1 the leader lease was lost or the process failed,
2 bad usage or configuration. ``omereconcile forecast`` has its own (``omereconcile.forecast.command``).
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import re
import signal
import sys
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from types import FrameType
from typing import Any

from omereconcile import logs
from omereconcile.actions import Plan
from omereconcile.cluster.executor import target_of
from omereconcile.cluster.kube import ApiError, Kube, KubeconfigError, NotFound
from omereconcile.cluster.leader import LeaderElector, RangeLeases, default_identity
from omereconcile.cluster.observe import build_catalog, fetch_catalog_objects, observe, paths
from omereconcile.controller import CONFIG_NAME, Controller
from omereconcile.metrics import Metrics, ProbeServer
from omereconcile.planner import plan
from omereconcile.server import secure_metrics
from omereconcile.server.certrotator import CertRotator
from omereconcile.server.secure_metrics import MetricsServer
from omereconcile.server.webhook import AdmissionServer, ClusterReader
from omereconcile.settings import OperatorSettings, SettingsError, settings_from_configmap
from omereconcile.sharding import validate_timing
from omerender import __version__

__all__ = ["main"]

log = logging.getLogger("omereconcile")


# Two workers keep a settling fleet's reads and writes low; an operator rolling hundreds of replicas
# at once raises it (at 8 the queue wait of a 10% roll fell five- to eightfold but a settle cost 2.8x the
# reads and a third more status writes: docs/reconciler.md, "Workers and the 10% roll").
DEFAULT_CONCURRENCY = 2


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _user_agent(text: str) -> str:
    """An HTTP header value the client can send: printable ASCII, not blank. (A newline or a character
    outside Latin-1 would fail every request later, as a connection error the process retries forever.)"""
    if not text.strip():
        raise argparse.ArgumentTypeError("is empty; omit the flag for the default omereconcile/IDENTITY")
    bad = next((ch for ch in text if not (" " <= ch <= "~")), None)
    if bad is not None:
        raise argparse.ArgumentTypeError(
            f"{text!r} has {bad!r}, which an HTTP header cannot carry; use printable ASCII, e.g. "
            "omereconcile/fleet-a"
        )
    return text


_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?")


def _lease_prefix(text: str) -> str:
    """The start of Lease names (``PREFIX-N-INDEX``, ``PREFIX-N-m-SLOT``, ``PREFIX-N-cuts``): a Lease name
    is a DNS subdomain (at most 253 characters), so the prefix is one with room for the suffixes."""
    if not _DNS_SUBDOMAIN.fullmatch(text) or len(text) > 200:
        raise argparse.ArgumentTypeError(
            f"{text!r} cannot start a Lease name: use lowercase letters, digits, '-' and '.', starting and "
            "ending with a letter or digit, at most 200 characters (e.g. omereconcile-shard)"
        )
    return text


def _addr(text: str) -> tuple[str, int]:
    """``HOST:PORT``, ``:PORT`` (every IPv4 address) or ``[IPv6]:PORT``, as Go's net.SplitHostPort reads
    the flags controller-runtime takes (``--metrics-bind-address=:8080``)."""
    host, sep, port = text.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise argparse.ArgumentTypeError(f"{text!r}: put an IPv6 address in brackets, e.g. [::]:9443")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not HOST:PORT (e.g. :9443 or 127.0.0.1:9443)")
    return host or "0.0.0.0", int(port)


def _version() -> str:
    """The distribution's version (pyproject.toml reads it from ``omerender.__version__``)."""
    return __version__


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="omereconcile", description="OME InferenceReplica reconciler")
    parser.add_argument("--version", action="version", version=f"omereconcile {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser("run", help="run the reconciler (watches, leader election, webhook, probes)")
    run.add_argument("--kubeconfig", help="kubeconfig file (default: in-cluster, else ~/.kube/config)")
    run.add_argument(
        "--namespace",
        "-n",
        action="append",
        dest="namespaces",
        help="watch only this namespace (repeatable; default: every namespace)",
    )
    run.add_argument("--ome-namespace", default=os.environ.get("POD_NAMESPACE", "ome"))
    run.add_argument("--config-name", default=CONFIG_NAME, help="operator settings ConfigMap")
    run.add_argument(
        "--concurrency",
        "--workers",
        dest="workers",
        type=_positive_int,
        default=DEFAULT_CONCURRENCY,
        help="replicas reconciled at once (controller-runtime's MaxConcurrentReconciles); a replica is "
        "never reconciled by two workers at once",
    )
    run.add_argument("--resync-period", type=float, default=300.0, help="seconds between full resyncs")
    run.add_argument("--watch-timeout", type=int, default=60, help="server-side watch timeout, seconds")
    run.add_argument("--probe-addr", type=_addr, default=":8081", help="/healthz, /readyz (port 0: any)")
    run.add_argument(
        "--metrics-bind-address",
        default="0",
        help="/metrics (controller-runtime's flag, and its default: '0', no metrics server; the chart and "
        "deploy/ pass :8443): HOST:PORT, port 0 any",
    )
    run.add_argument(
        "--metrics-secure",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="HTTPS with TokenReview authentication and SubjectAccessReview authorization (get /metrics); "
        "--no-metrics-secure serves plain HTTP to anyone who can connect",
    )
    run.add_argument("--metrics-cert-dir", help="tls.crt and tls.key for /metrics (default: self-signed)")
    run.add_argument(
        "--metrics-on-probe-port",
        action="store_true",
        help="also serve /metrics on --probe-addr, plain HTTP without authentication (explicit opt-in)",
    )
    run.add_argument("--leader-elect", action=argparse.BooleanOptionalAction, default=True)
    run.add_argument("--lease-name", default="omereconcile-leader")
    run.add_argument("--lease-namespace", default=None, help="default: --ome-namespace")
    run.add_argument("--lease-duration", type=float, default=15.0)
    run.add_argument("--renew-deadline", type=float, default=10.0)
    run.add_argument("--retry-period", type=float, default=2.0)
    run.add_argument(
        "--shards",
        type=_positive_int,
        default=1,
        help="hash ranges over the namespace, one Lease each (issue 31): every process started with the "
        "same N takes ranges up to its fair share and acts only on the replicas of the ranges it holds, "
        "watching only them (server-side shardSelector, or a client-side filter when the API server's "
        "ShardedListAndWatch gate is off). Default 1: one acting process, the leader (--leader-elect)",
    )
    run.add_argument(
        "--shard-lease-prefix",
        type=_lease_prefix,
        default="omereconcile-shard",
        help="name prefix of the range Leases (PREFIX-N-INDEX), the member Leases and the cuts Lease, in "
        "--lease-namespace",
    )
    run.add_argument(
        "--user-agent",
        type=_user_agent,
        help="the User-Agent of every request, printable ASCII (default: omereconcile/IDENTITY, this "
        "process's Lease identity, so the API server's audit log tells processes apart; the API server names "
        "the field manager after the part before the '/', so keep it 'omereconcile')",
    )
    run.add_argument("--webhook-cert", help="TLS certificate: serve the admission webhook when given")
    run.add_argument("--webhook-key", help="TLS key for --webhook-cert")
    run.add_argument("--webhook-addr", type=_addr, default=":9443")
    certs = run.add_argument_group(
        "self-managed webhook certificate",
        "keep the serving certificate and its CA in a Secret, rotate them, write them to --webhook-cert "
        "and --webhook-key, and keep the webhook configuration's caBundle current",
    )
    certs.add_argument("--cert-secret", help="the Secret in --ome-namespace (created empty beforehand)")
    certs.add_argument("--cert-service", help="the webhook Service: the certificate's DNS names")
    certs.add_argument(
        "--cert-webhook-config", help="the ValidatingWebhookConfiguration to inject the CA into"
    )
    certs.add_argument("--cert-check-period", type=float, default=60.0, help="seconds between checks")
    run.add_argument("--log-level", default="info")
    run.set_defaults(func=_run)

    dry = sub.add_parser("plan", help="print the next pass's actions and reasons without acting")
    dry.add_argument("name")
    dry.add_argument("--namespace", "-n", default="default")
    dry.add_argument("--kubeconfig")
    dry.add_argument("--ome-namespace", default="ome")
    dry.add_argument("--config-name", default=CONFIG_NAME)
    dry.set_defaults(func=_plan)

    _add_forecast(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if getattr(args, "webhook_cert", None) and not args.webhook_key:
        parser.error("--webhook-cert needs --webhook-key (the certificate's private key, PEM)")
    if getattr(args, "webhook_key", None) and not args.webhook_cert:
        parser.error("--webhook-key needs --webhook-cert (the certificate it belongs to, PEM)")
    if getattr(args, "metrics_bind_address", "0") != "0":
        try:
            _addr(args.metrics_bind_address)
        except argparse.ArgumentTypeError as exc:
            parser.error(f"--metrics-bind-address: {exc}")
    if getattr(args, "shards", 1) > 1:
        try:  # the fence of a range Lease (RangeLeases checks it too): refused before anything starts
            validate_timing(args.lease_duration, args.renew_deadline, args.retry_period)
        except ValueError:
            parser.error(
                f"--shards {args.shards} needs 0 < --retry-period ({args.retry_period:g}) < --renew-deadline "
                f"({args.renew_deadline:g}) < --lease-duration ({args.lease_duration:g}), so that a process "
                "stops acting on a range before another can take it (the defaults 2 < 10 < 15 do)"
            )
    if getattr(args, "cert_secret", None):
        if not args.webhook_cert:
            parser.error("--cert-secret needs --webhook-cert and --webhook-key (where to write the pair)")
        if not (args.cert_service and args.cert_webhook_config):
            parser.error("--cert-secret needs --cert-service and --cert-webhook-config")
    code: int = args.func(args)
    return code


# -- run ---------------------------------------------------------------------------------------------------


def _run(args: argparse.Namespace) -> int:
    logs.setup(args.log_level)
    try:
        kube = Kube.auto(args.kubeconfig)
    except KubeconfigError as exc:
        print(f"omereconcile run: error: cannot load the kubeconfig: {exc}", file=sys.stderr)
        return 2
    metrics = Metrics()
    identity = default_identity()
    kube.set_user_agent(args.user_agent or f"omereconcile/{identity}")
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        log.info("signal received; stopping", extra={"signal": signal.Signals(signum).name})
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    shards: RangeLeases | None = None
    shard_ranges = None
    if args.shards > 1:
        try:
            shards = RangeLeases(
                kube,
                args.lease_namespace or args.ome_namespace,
                args.shards,
                prefix=args.shard_lease_prefix,
                identity=identity,
                lease_duration=args.lease_duration,
                renew_deadline=args.renew_deadline,
                retry_period=args.retry_period,
                metrics=metrics,
            )
            shard_ranges = shards.agreed_ranges(lambda: _fleet_namespaces(kube, args.namespaces))
        except ValueError as exc:
            log.error("cannot shard", extra={"error": str(exc)})
            kube.close()
            return 2
        except ApiError as exc:
            log.error("cannot read or store the shard range cuts", extra={"error": str(exc)})
            kube.close()
            return 1
        log.info(
            "sharded: acting only on the ranges this process holds",
            extra={"shards": args.shards, "identity": identity},
        )
    controller = Controller(
        kube,
        namespaces=args.namespaces,
        ome_namespace=args.ome_namespace,
        config_name=args.config_name,
        workers=args.workers,
        resync_period=args.resync_period,
        watch_timeout=args.watch_timeout,
        metrics=metrics,
        identity=identity,
        shard_ranges=shard_ranges,
        fence=shards.acting if shards is not None else None,
    )
    elector: LeaderElector | None = None
    if args.leader_elect and shards is None:
        elector = LeaderElector(
            kube,
            args.lease_namespace or args.ome_namespace,
            args.lease_name,
            identity=identity,
            lease_duration=args.lease_duration,
            renew_deadline=args.renew_deadline,
            retry_period=args.retry_period,
            metrics=metrics,
        )
    started = threading.Event()

    webhook: AdmissionServer | None = None

    def ready() -> bool:
        # A standby is ready (it serves the webhook and waits); a leader once its caches synced. With a
        # webhook, only once its TLS port completes a handshake and answers (controller-runtime adds
        # the webhook server's StartedChecker to /readyz the same way).
        if webhook is not None and not webhook.answers():
            return False
        return not started.is_set() or controller.synced()

    def healthy() -> bool:
        return not started.is_set() or controller.healthy()

    if args.cert_secret:
        rotator = CertRotator(
            kube,
            namespace=args.ome_namespace,
            secret=args.cert_secret,
            service=args.cert_service,
            webhook_config=args.cert_webhook_config,
            cert_file=args.webhook_cert,
            key_file=args.webhook_key,
            check_every=args.cert_check_period,
        )
        if not rotator.ensure(stop):
            kube.close()
            return 0
        rotator.start(stop)

    if args.webhook_cert:
        reader = ClusterReader(
            kube, ome_namespace=args.ome_namespace, config_name=args.config_name, namespaces=args.namespaces
        )
        whost, wport = args.webhook_addr
        webhook = AdmissionServer(
            reader.handle, cert_file=args.webhook_cert, key_file=args.webhook_key, host=whost, port=wport
        ).start()
        log.info("webhook listening", extra={"port": webhook.port})

    host, port = args.probe_addr
    probes = ProbeServer(
        metrics, host, port, healthy=healthy, ready=ready, serve_metrics=args.metrics_on_probe_port
    ).start()
    log.info("probes listening", extra={"port": probes.port, "identity": identity})
    scrape: MetricsServer | None = None
    if args.metrics_bind_address != "0":
        mhost, mport = _addr(args.metrics_bind_address)
        scrape = secure_metrics.serve(
            metrics, kube, mhost, mport, secure=args.metrics_secure, cert_dir=args.metrics_cert_dir
        )
        log.info("metrics listening", extra={"port": scrape.port, "secure": scrape.secure})

    failed: list[BaseException] = []

    def start_controller() -> None:
        started.set()
        try:
            controller.start()
        except Exception as exc:  # cannot sync: exit non-zero rather than run blind
            log.exception("controller failed to start")
            failed.append(exc)
            stop.set()

    code = 0
    try:
        if shards is not None:
            start_controller()
            if not failed:
                _hold_ranges(shards, controller, stop, args.retry_period, args.renew_deadline)
            controller.stop()
            shards.release_all()
        elif elector is not None:
            # start_controller runs in its own thread so lease renewals never wait on the cache sync.
            kept = elector.run(
                stop,
                lambda: threading.Thread(target=start_controller, daemon=True).start(),
                before_release=controller.stop,
            )
            if not kept:
                log.error("leader election lost; exiting")
                controller.stop(timeout=2.0)
                logging.shutdown()
                os._exit(1)
        else:
            start_controller()
            stop.wait()
    finally:
        controller.stop()
        probes.stop()
        if scrape is not None:
            scrape.stop()
        if webhook is not None:
            webhook.stop()
        kube.close()
    if failed:
        code = 1
    log.info("stopped", extra={"exit_code": code})
    return code


def _fleet_namespaces(kube: Kube, namespaces: list[str] | None) -> list[str]:
    """The namespaces holding replicas now (the scopes given, or every namespace): what the first
    sharded process cuts the ranges from."""
    found: set[str] = set()
    scopes: list[str | None] = list(namespaces) if namespaces else [None]
    for ns in scopes:
        for item in kube.list(paths.replicas(ns))["items"]:
            found.add(str((item.get("metadata") or {}).get("namespace") or ""))
    return sorted(found)


def _hold_ranges(
    shards: RangeLeases, controller: Controller, stop: threading.Event, period: float, deadline: float
) -> None:
    """Until ``stop``: a range Lease round every ``period`` seconds; the controller watches the ranges
    this process holds and stops acting on a range (waiting for its passes there) before its Lease is
    released. A range whose renewal failed is dropped too (its fence has closed or closes by itself)."""
    wait = max(min(deadline / 2, 5.0), 0.1)
    while not stop.is_set():
        try:
            shards.round(before_release=lambda idx: controller.drop_ranges(idx, wait=wait))
        except ApiError as exc:
            log.warning("range Lease round failed", extra={"error": str(exc)})
        held = set(shards.renewed_at)
        controller.drop_ranges(controller.held_ranges() - held, wait=wait)
        controller.hold_ranges(held)
        stop.wait(period)


# -- plan --------------------------------------------------------------------------------------------------


def _plan(args: argparse.Namespace) -> int:
    try:
        kube = Kube.auto(args.kubeconfig)
        config: dict[str, Any] = {}
        try:
            config = kube.get(paths.configmap(args.ome_namespace, args.config_name)).get("data") or {}
            settings = settings_from_configmap(config)
        except NotFound:
            settings = OperatorSettings()
        catalog = build_catalog(
            fetch_catalog_objects(kube, [args.namespace]),
            settings.controller_identity,
            settings.accelerator_resources,
            config,
        )
        obs = observe(
            kube, args.namespace, args.name, catalog=catalog, settings=settings, now=datetime.now(UTC)
        )
    except SettingsError as exc:
        print(f"omereconcile plan: {args.ome_namespace}/{args.config_name}: {exc}", file=sys.stderr)
        return 2
    except KubeconfigError as exc:
        print(f"omereconcile plan: error: cannot load the kubeconfig: {exc}", file=sys.stderr)
        return 2
    except ApiError as exc:
        print(f"omereconcile plan: {exc}", file=sys.stderr)
        return 1
    if obs is None:
        print(f"omereconcile plan: InferenceReplica {args.namespace}/{args.name} not found", file=sys.stderr)
        return 1
    p = plan(obs.world)
    render = obs.world.render
    target = getattr(render, "name", None) or f"render blocked: {getattr(render, 'reason', '')}"
    print(f"InferenceReplica {args.namespace}/{args.name} (dry run; nothing was changed)")
    print(f"spec renders: {target}")
    print(describe(p))
    return 0


def describe(p: Plan) -> str:
    """The plan as text: the summary, then one line per action with its target and reason."""
    lines = [p.summary or "nothing to do"]
    for act in p.actions:
        target = target_of(act)
        lines.append(f"  {type(act).__name__}{' ' + target if target else ''}: {act.reason}")
    if p.requeue_after is not None:
        lines.append(f"  requeue after {p.requeue_after:g}s")
    return "\n".join(lines)


def _add_forecast(sub: Any) -> None:
    """``forecast`` renders like ``omerender diff``, which needs the ``tools`` extra (deepdiff); the
    reconciler's image installs only ``reconcile``, so there the command says what to install."""
    if _installed("deepdiff"):
        from omereconcile.forecast import command

        command.add_parser(sub)
    else:
        # No option prefix: whatever follows is taken as words, so the message below is what it says.
        stub = sub.add_parser(
            "forecast", help="rollout forecast (needs the 'tools' extra)", prefix_chars="\0", add_help=False
        )
        stub.add_argument("words", nargs="*")
        stub.set_defaults(func=_forecast_unavailable)


def _installed(module: str) -> bool:
    """Whether ``module`` can be imported, without importing it (``omereconcile run`` never needs it)."""
    try:
        return importlib.util.find_spec(module) is not None
    except ValueError:  # present in sys.modules as None: explicitly not importable
        return False


def _forecast_unavailable(args: argparse.Namespace) -> int:
    print(
        "omereconcile forecast: needs the 'tools' extra (deepdiff is not installed): "
        "pip install 'omerender[tools]'",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
