"""`python -m testbed build` | `python -m testbed up [--nodes N]`."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
from pathlib import Path
from types import FrameType

from testbed.assets import BuildError, build, build_coscheduler
from testbed.controlplane import ControlPlane
from testbed.kubelet import FakeKubelet


def _up(args: argparse.Namespace) -> int:
    try:
        assets = build(stream=True)
        cosched = build_coscheduler(stream=True) if args.gang_scheduler else None
    except BuildError as exc:
        print(exc, file=sys.stderr)
        return 1
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    cp = ControlPlane(
        assets_dir=assets, run_dir=Path(args.run_dir) if args.run_dir else None, coscheduler_dir=cosched
    )
    t0 = time.monotonic()
    cp.start()
    kubelet = FakeKubelet(cp.api_client(), nodes=args.nodes, ready_delay=args.ready_delay)
    try:
        kubelet.start()
        print(f"# control plane up in {time.monotonic() - t0:.1f}s; logs in {cp.run_dir}", file=sys.stderr)
        print(f"# nodes: {' '.join(kubelet.node_names)}; Ctrl-C to stop", file=sys.stderr)
        print(f"export KUBECONFIG={cp.kubeconfig}", flush=True)
        while not stop.wait(1.0):
            pass
    finally:
        kubelet.stop()
        cp.stop()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m testbed", description=__doc__)
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("build", help="build or reuse the control-plane binaries")
    up = sub.add_parser("up", help="run a control plane and fake GPU nodes in the foreground")
    up.add_argument("--nodes", type=int, default=4)
    up.add_argument("--ready-delay", type=float, default=0.0, help="seconds until containers are ready")
    up.add_argument("--run-dir", default=None, help="keep certs/logs/etcd here instead of a temp dir")
    up.add_argument(
        "--no-gang-scheduler",
        dest="gang_scheduler",
        action="store_false",
        help="do not build and start scheduler-plugins' Coscheduling scheduler",
    )
    args = parser.parse_args(argv)
    if args.cmd == "build":
        try:
            assets = build(stream=True)
        except BuildError as exc:
            print(exc, file=sys.stderr)
            return 1
        print(f"export KUBEBUILDER_ASSETS={assets}")
        return 0
    return _up(args)


if __name__ == "__main__":
    sys.exit(main())
