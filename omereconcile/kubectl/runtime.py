"""``kubectl ome runtime explain --model NAME [--component C]`` and ``runtime tree RUNTIME``.

``explain`` is the live selection: the live catalog (:mod:`...catalog`) given to ``omerender``'s own
selection (``omerender.selection.evaluate_runtimes``, OME ``pkg/runtimeselector``), so the winner, every
candidate's score and every exclusion's reason are the controller's. The model is the ``BaseModel`` of
that name in the namespace, else the ``ClusterBaseModel`` (``--model-kind`` picks one), as OME's merged
model lookup tries the namespaced object first. Selection reads each runtime's own spec: inheritance
applies only to a runtime a replica names.

``tree`` shows a runtime's parents (its ``ome.io/inherit-from`` chain, root first, resolved by
``omerender.inheritance.Resolver``), the runtimes that inherit from it, and under each runtime the
InferenceReplicas that name it (``spec.runtimeRef``, resolved as the controller resolves it) or select it
(a ``modelRef`` replica without ``runtimeRef`` whose live selection picks it). A ClusterServingRuntime's
tree reads every namespace; a ServingRuntime's its own.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from omereconcile.cluster.kube import ApiError
from omereconcile.kubectl.client import GROUP_VERSION, CommandError
from omereconcile.kubectl.context import Ctx
from omereconcile.kubectl.report import table

if TYPE_CHECKING:
    from omerender.catalog import Catalog
    from omerender.models import ModelResource, RuntimeResource

__all__ = ["add_parsers"]

COMPONENTS = ("engine", "decoder", "router")
RUNTIME_KINDS = ("ServingRuntime", "ClusterServingRuntime")


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    runtime = sub.add_parser("runtime", help="runtime selection and inheritance, live")
    verbs = runtime.add_subparsers(dest="verb", required=True, metavar="VERB")

    explain = verbs.add_parser(
        "explain", parents=[common], help="which runtime the controller selects for a model"
    )
    explain.add_argument("--model", required=True, help="the model's name")
    explain.add_argument(
        "--model-kind", choices=["BaseModel", "ClusterBaseModel"], help="default: BaseModel first"
    )
    explain.add_argument("--component", choices=COMPONENTS, default="engine", help="the replica's component")
    explain.add_argument("--ome-namespace", default="ome", help="where inferenceservice-config lives")
    explain.add_argument("-o", "--output", choices=["table", "json", "yaml"], default="table")
    explain.set_defaults(func=run_explain)

    tree = verbs.add_parser("tree", parents=[common], help="a runtime's parents, inheritors and replicas")
    tree.add_argument("runtime", metavar="RUNTIME")
    tree.add_argument("--kind", choices=RUNTIME_KINDS, help="resolve a name both kinds carry")
    tree.add_argument("--ome-namespace", default="ome", help="where inferenceservice-config lives")
    tree.add_argument("-o", "--output", choices=["table", "json", "yaml"], default="table")
    tree.set_defaults(func=run_tree)


def _ref(rt: RuntimeResource) -> str:
    if rt.kind == "ServingRuntime":
        return f"ServingRuntime/{rt.metadata.namespace}/{rt.metadata.name}"
    return f"ClusterServingRuntime/{rt.metadata.name}"


def _model(catalog: Catalog, kind: str | None, ns: str, name: str) -> ModelResource:
    kinds = [kind] if kind else ["BaseModel", "ClusterBaseModel"]
    for k in kinds:
        found = catalog.model(k, ns, name)
        if found is not None:
            return found
    raise CommandError(f'no {" or ".join(kinds)} named "{name}" (namespace "{ns}")')


def run_explain(ctx: Ctx) -> int:
    # The rendering library loads only for the verbs that render or select.
    from omereconcile.kubectl.catalog import live_catalog
    from omerender.errors import RenderBlocked
    from omerender.selection import evaluate_runtimes, piece_advisory

    args = ctx.args
    client = ctx.client()
    ns = client.namespace
    catalog = live_catalog(client, [ns], args.ome_namespace, ctx.err)
    model = _model(catalog, args.model_kind, ns, args.model)
    try:
        report = evaluate_runtimes(model, catalog, ns, args.component)
    except RenderBlocked as blocked:
        raise CommandError(f"{blocked.reason.value}: {blocked.message}") from blocked
    winner = report.selected
    candidates = [
        {
            "rank": i + 1,
            "runtime": _ref(cand.runtime),
            "score": cand.score,
            "sizeDistance": cand.size_distance if cand.size_distance != float("inf") else None,
            "hasPiece": cand.runtime.piece(args.component) is not None,
        }
        for i, cand in enumerate(report.candidates)
    ]
    excluded = [
        {"runtime": _ref(ex.runtime), "cause": str(ex.cause), "reason": ex.reason} for ex in report.exclusions
    ]
    advisory = piece_advisory(report)
    spec = model.spec
    content: dict[str, Any] = {
        "model": f"{model.kind}/{model.metadata.name}",
        "format": spec.model_format.name,
        "component": args.component,
        "namespace": ns,
        "selected": _ref(winner) if winner else None,
        "candidates": candidates,
        "excluded": excluded,
        "checked": {"namespaced": report.namespaced_runtimes, "cluster": report.cluster_runtimes},
    }
    if advisory:
        content["advisory"] = advisory
    if winner is None:
        content["message"] = report.no_runtime_message()
    text = (
        f"Model:      {model.kind}/{model.metadata.name} (format {spec.model_format.name or '-'})\n"
        f"Component:  {args.component} in namespace {ns}\n"
        f"Selected:   {_ref(winner) if winner else 'none'}\n"
        f"Checked:    {report.namespaced_runtimes} namespace-scoped, {report.cluster_runtimes} cluster-scoped runtimes\n"
    )
    if advisory:
        text += f"Advisory:   {advisory}\n"
    if winner is None:
        text += f"Message:    {report.no_runtime_message()}\n"
    text += "\n"
    if candidates:
        rows = [["RANK", "RUNTIME", "SCORE", "SIZE-DISTANCE", f"{args.component.upper()}-PIECE"]]
        for cand in candidates:
            dist = cand["sizeDistance"]
            rows.append(
                [
                    str(cand["rank"]),
                    str(cand["runtime"]),
                    str(cand["score"]),
                    "-" if dist is None else f"{dist:g}",
                    "yes" if cand["hasPiece"] else "no",
                ]
            )
        text += table(rows)
    else:
        text += "No candidates.\n"
    if excluded:
        text += "\n" + table([["EXCLUDED", "REASON"], *([e["runtime"], e["reason"]] for e in excluded)])
    ctx.report("RuntimeExplainReport", {"model": args.model}, content, text)
    return 0


# -- tree -------------------------------------------------------------------------------------------------


@dataclass
class _Node:
    runtime: RuntimeResource
    children: list[_Node] = field(default_factory=list)
    users: list[tuple[str, str]] = field(default_factory=list)  # (replica ns/name, "names"|"selects")

    def document(self) -> dict[str, Any]:
        return {
            "runtime": _ref(self.runtime),
            "replicas": [{"replica": r, "relation": how} for r, how in self.users],
            "inheritors": [c.document() for c in self.children],
        }

    def lines(self, prefix: str = "", last: bool = True, root: bool = True) -> list[str]:
        head = "" if root else prefix + ("`-- " if last else "|-- ")
        out = [head + _ref(self.runtime) + (" [selected]" if root else "")]
        inner = "" if root else prefix + ("    " if last else "|   ")
        leaves: list[tuple[str, _Node | None]] = [
            (f"InferenceReplica/{r} ({how})", None) for r, how in self.users
        ]
        leaves += [("", child) for child in self.children]
        for i, (text, child) in enumerate(leaves):
            is_last = i == len(leaves) - 1
            if child is None:
                out.append(inner + ("`-- " if is_last else "|-- ") + text)
            else:
                out += child.lines(inner, is_last, root=False)
        return out


def _find_runtime(catalog: Catalog, name: str, kind: str | None, ns: str) -> RuntimeResource:
    namespaced = catalog.runtime("ServingRuntime", ns, name)
    cluster = catalog.runtime("ClusterServingRuntime", "", name)
    if kind == "ServingRuntime" or (kind is None and namespaced is not None and cluster is None):
        if namespaced is None:
            raise CommandError(f'no ServingRuntime "{name}" in namespace "{ns}"')
        return namespaced
    if kind == "ClusterServingRuntime" or (kind is None and cluster is not None and namespaced is None):
        if cluster is None:
            raise CommandError(f'no ClusterServingRuntime "{name}"')
        return cluster
    if namespaced is not None and cluster is not None:
        raise CommandError(
            f"both ServingRuntime {ns}/{name} and ClusterServingRuntime {name} exist: pick one with --kind"
        )
    raise CommandError(
        f'no ServingRuntime "{name}" in namespace "{ns}" and no ClusterServingRuntime "{name}"'
    )


def _key(rt: RuntimeResource) -> tuple[str, str, str]:
    return (rt.kind, (rt.metadata.namespace or "") if rt.kind == "ServingRuntime" else "", rt.metadata.name)


def run_tree(ctx: Ctx) -> int:
    from omereconcile.kubectl.catalog import live_catalog
    from omerender.errors import OmeRenderError, RenderBlocked
    from omerender.inheritance import InheritanceError, Resolver
    from omerender.models import InferenceReplica, parse_object
    from omerender.selection import evaluate_runtimes

    args = ctx.args
    client = ctx.client()
    ns = client.namespace
    # A ClusterServingRuntime's inheritors and users may be in any namespace; list them all only then.
    probe = live_catalog(client, [ns], args.ome_namespace, ctx.err)
    target = _find_runtime(probe, args.runtime, args.kind, ns)
    everywhere = target.kind == "ClusterServingRuntime"
    catalog = live_catalog(client, None, args.ome_namespace, ctx.err) if everywhere else probe
    target = _find_runtime(catalog, args.runtime, target.kind, ns)
    resolver = Resolver(catalog)
    warnings: list[str] = []
    try:
        parents = [_ref(rt) for rt in resolver.resolve(target).chain[:-1]]
    except InheritanceError as exc:
        parents = []
        warnings.append(f"{_ref(target)} does not resolve: {exc}")
    # Every runtime's chain, to find the ones that inherit from the target (directly or not).
    nodes: dict[tuple[str, str, str], _Node] = {_key(target): _Node(target)}
    scope = [*catalog.cluster_runtimes()] + [
        rt for rt in catalog.runtimes.values() if rt.kind == "ServingRuntime"
    ]
    for rt in scope:
        try:
            chain = resolver.resolve(rt).chain
        except InheritanceError:
            continue
        keys = [_key(x) for x in chain]
        if _key(target) not in keys[:-1]:
            continue
        start = keys.index(_key(target))
        for parent, child in zip(chain[start:], chain[start + 1 :], strict=False):
            node = nodes.setdefault(_key(child), _Node(child))
            owner = nodes[_key(parent)]
            if all(_key(c.runtime) != _key(child) for c in owner.children):
                owner.children.append(node)
    # The replicas that name or select a runtime of the tree.
    path = f"/apis/{GROUP_VERSION}/inferencereplicas" if everywhere else client.replicas_path()
    try:
        replicas = client.items(path)
    except ApiError as exc:
        replicas = []
        warnings.append(f"cannot list InferenceReplicas ({exc.reason or exc.status}): no users shown")
    for raw in sorted(replicas, key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"])):
        meta = raw.get("metadata") or {}
        who = f"{meta.get('namespace')}/{meta.get('name')}"
        try:
            # The API server already admitted it; a field newer than our CRDs must not stop a read.
            replica = parse_object(InferenceReplica, raw, strict=False)
        except OmeRenderError:
            warnings.append(f"InferenceReplica {who} does not parse: left out")
            continue
        spec = replica.spec
        used: RuntimeResource | None = None
        how = "names"
        if spec.runtime_ref is not None:
            used = catalog.named_runtime(spec.runtime_ref.kind, replica.namespace, spec.runtime_ref.name)
        elif spec.model_ref is not None:
            model = catalog.model_for(replica)
            how = "selects"
            if model is not None:
                try:
                    used = evaluate_runtimes(model, catalog, replica.namespace, spec.component).selected
                except RenderBlocked:
                    used = None
        if used is not None and _key(used) in nodes:
            nodes[_key(used)].users.append((who, how))
    root = nodes[_key(target)]
    content = {"target": _ref(target), "parents": parents, "tree": root.document()}
    text = "Parents: " + (" -> ".join([*parents, _ref(target)]) if parents else "none") + "\n"
    text += "\n".join(root.lines()) + "\n"
    for w in warnings:
        ctx.err.write(f"Warning: {w}\n")
    ctx.report("RuntimeTreeReport", {"runtime": args.runtime}, content, text, warnings=warnings)
    return 0
