"""``omerender render``: print what OME would create for a replica."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from omerender.catalog import Catalog
from omerender.cli.assume import add_flag
from omerender.cli.io import dump_stream, load_one
from omerender.cli.objects import add_kustomize_flag, add_objects_options, add_path_flag, catalog_objects
from omerender.cli.strict import check_replica
from omerender.errors import RenderBlocked
from omerender.models import InferenceReplica, parse_object
from omerender.preview import Preview, preview
from omerender.readiness import assume_models_ready

__all__ = ["add_parser", "documents", "run"]


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "render",
        help="render a replica's pod templates, headless Service and ControllerRevision",
        description="Render an InferenceReplica the way OME's controller does and print a YAML stream.",
    )
    p.add_argument("replica", help="file holding one InferenceReplica (- reads standard input)")
    add_path_flag(
        p,
        "--objects",
        default=[],
        help=(
            "files or folders with the models, runtimes and fine-tuned weights the replica reads "
            "(repeatable; - reads standard input)"
        ),
    )
    add_kustomize_flag(p)
    add_objects_options(p)
    p.add_argument(
        "--instances",
        type=int,
        default=0,
        metavar="N",
        help="also print the pods of Instances 0..N-1 (and PodGroups of multi-pod Instances)",
    )
    p.add_argument(
        "--validate",
        action="store_true",
        help="check every printed Kubernetes object against the Kubernetes 1.36 schemas (exit 1 if any fails)",
    )
    p.add_argument(
        "--uid",
        type=_uid,
        metavar="UID",
        help="the replica's metadata.uid in the cluster, which OME hashes into a standalone replica's "
        "revision name (a file has none; kubectl get inferencereplica NAME -n NS -o jsonpath='{.metadata.uid}')",
    )
    add_flag(p)
    p.set_defaults(func=run)


def _uid(text: str) -> str:
    if not text or text != text.strip() or any(ch.isspace() or not ch.isprintable() for ch in text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a uid: pass the replica's metadata.uid")
    return text


def _source(replica: InferenceReplica, what: str, result: Preview) -> str:
    r = result.render
    origin = {"runners": "spec.runners", "runtimeRef": "", "modelRef": ""}[r.source]
    if r.runtime_name:
        origin = f"{r.runtime_kind} {r.runtime_name}"
        if r.model_name:
            kind = replica.spec.model_ref.effective_kind if replica.spec.model_ref else "ClusterBaseModel"
            origin += f" + {kind} {r.model_name}"
    return f"InferenceReplica {replica.namespace}/{replica.metadata.name}: {what} ({origin})"


def documents(replica: InferenceReplica, result: Preview) -> list[tuple[str, Any]]:
    """The stream ``render`` prints: each object with the ``# Source:`` line saying what made it."""
    docs: list[tuple[str, Any]] = []
    prefix, component = replica.name_prefix, replica.spec.component
    for runner in result.render.runners:
        template = {
            "apiVersion": "v1",
            "kind": "PodTemplate",
            "metadata": {"name": f"{prefix}-{component}-{runner.name}", "namespace": replica.namespace},
            "template": runner.template,
        }
        docs.append(
            (_source(replica, f"runner {runner.name} (size {runner.size}) template", result), template)
        )
    docs.append((_source(replica, "headless Service", result), result.service))
    docs.append((_source(replica, "ControllerRevision", result), result.controller_revision))
    for group in result.pod_groups:
        docs.append((_source(replica, "PodGroup", result), group))
    for pod in result.pods:
        labels = pod["metadata"]["labels"]
        where = f"Instance {labels['ome.io/instance-index']} pod"
        docs.append((_source(replica, where, result), pod))
    return docs


# Each Instance is a few pods of a few kilobytes; far more than any replica runs, and a bound on the
# memory and time a mistyped count can cost.
MAX_INSTANCES = 1000


def run(args: argparse.Namespace) -> int:
    if not 0 <= args.instances <= MAX_INSTANCES:
        print(f"omerender render: --instances must be between 0 and {MAX_INSTANCES}", file=sys.stderr)
        return 2
    raw = load_one(args.replica, "InferenceReplica")
    check_replica(raw, args.replica)
    replica = parse_object(InferenceReplica, raw, strict=False)  # checked above, as the CLI words it
    # Checked as the loader read them.
    catalog = Catalog.from_objects(
        catalog_objects(args.objects, args, kustomizations=args.kustomize), strict=False
    )
    assumed = None
    if args.assume_models_ready:
        assumed = assume_models_ready(catalog)
        catalog = assumed.catalog
        print(f"render: {assumed.note()}", file=sys.stderr)
    try:
        result = preview(replica, catalog, instances=args.instances, uid=args.uid)
    except RenderBlocked as blocked:
        model = catalog.model_for(replica)
        unknown = assumed is not None and model is not None and not model.spec.model_format.name
        why = (
            " (assumed Ready, the model has no format until OME has downloaded its weights)"
            if unknown
            else ""
        )
        print(f"{blocked.reason.value}: {blocked.message}{why}", file=sys.stderr)
        return 1
    for advisory in result.render.advisories:
        print(f"Warning {advisory.reason}: {advisory.message}", file=sys.stderr)
    docs = documents(replica, result)
    if assumed is not None:  # a saved rendering says what it assumed, not only the terminal
        sys.stdout.write(f"# {assumed.note()}\n")
    if result.revision.uid_notice is not None:  # so does one whose revision name is provisional
        hint = "" if replica.metadata.isvc_controller_ref else "; pass --uid with the replica's uid"
        sys.stdout.write(f"# {result.revision.uid_notice}{hint}\n")
        print(f"render: note: {result.revision.uid_notice}{hint}", file=sys.stderr)
    sys.stdout.write(dump_stream(docs))
    if args.validate:
        from omerender.cli.kubeschema import kube_problems  # the tools extra's schemas: --validate only

        problems = [p for _, doc in docs for p in kube_problems(doc)]
        for problem in problems:
            print(f"Invalid: {problem}", file=sys.stderr)
        if problems:
            return 1
    return 0
