"""``omerender render``: print what OME would create for a replica."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from omerender.catalog import Catalog
from omerender.cli.assume import add_flag
from omerender.cli.io import dump_stream, load_one, strip_nulls
from omerender.cli.objects import add_kustomize_flag, add_objects_options, add_path_flag, catalog_objects
from omerender.cli.strict import check_replica
from omerender.errors import BlockReason, RenderBlocked
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
    p.add_argument(
        "-o",
        "--output",
        choices=("yaml", "json"),
        default="yaml",
        help="yaml: a stream, each object after a '# Source:' line (default); json: one v1 List, as "
        "kubectl get -o json prints several objects (the sources and notes go to standard error)",
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


# A block that says the catalog lacks something: when no catalog was given at all, that is a usage error.
_CATALOG_REASONS = frozenset(
    {BlockReason.MODEL_NOT_FOUND, BlockReason.RUNTIME_NOT_FOUND, BlockReason.RUNTIME_SELECTION_FAILED}
)


def _print_json(docs: list[tuple[str, Any]]) -> None:
    """``-o json``: the objects as one ``v1`` List, nulls dropped as in the YAML (the notes the YAML stream carries as comments are on
    standard error only: JSON has no comments)."""
    listing = {"apiVersion": "v1", "kind": "List", "items": [strip_nulls(doc) for _, doc in docs]}
    sys.stdout.write(json.dumps(listing, indent=2) + "\n")


def _invalid(docs: list[tuple[str, Any]]) -> int:
    """``--validate``: every printed object against the Kubernetes schemas; 1 when any fails."""
    from omerender.cli.kubeschema import kube_problems  # the tools extra's schemas: --validate only

    problems = [p for _, doc in docs for p in kube_problems(doc)]
    for problem in problems:
        print(f"Invalid: {problem}", file=sys.stderr)
    return 1 if problems else 0


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
        if blocked.reason in _CATALOG_REASONS and not args.objects and not args.kustomize:
            # Not a verdict on the replica: nothing was given to find its model or runtime in.
            print(
                f"omerender render: {args.replica} reads a model and a serving runtime, and no catalog was "
                f"given ({blocked.reason.value}: {blocked.message}): pass the files or folders that hold "
                "them with --objects PATH (or a kustomization with -k DIR)",
                file=sys.stderr,
            )
            return 2
        print(f"{blocked.reason.value}: {blocked.message}{why}", file=sys.stderr)
        return 1
    for advisory in result.render.advisories:
        print(f"Warning {advisory.reason}: {advisory.message}", file=sys.stderr)
    docs = documents(replica, result)
    uid_note = None
    if result.revision.uid_notice is not None:
        hint = "" if replica.metadata.isvc_controller_ref else "; pass --uid with the replica's uid"
        uid_note = f"{result.revision.uid_notice}{hint}"
        print(f"render: note: {uid_note}", file=sys.stderr)
    if args.output == "json":
        _print_json(docs)
        return _invalid(docs) if args.validate else 0
    if assumed is not None:  # a saved rendering says what it assumed, not only the terminal
        sys.stdout.write(f"# {assumed.note()}\n")
    if uid_note is not None:  # so does one whose revision name is provisional
        sys.stdout.write(f"# {uid_note}\n")
    sys.stdout.write(dump_stream(docs))
    return _invalid(docs) if args.validate else 0
