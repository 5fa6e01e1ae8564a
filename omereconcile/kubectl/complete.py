"""``kubectl_complete-ome``: shell completion of ``kubectl ome`` commands and resource names.

kubectl (1.26+) completes a plugin's arguments by running ``kubectl_complete-<plugin>`` from PATH with
the words after the plugin name, the last being the word being completed (possibly empty), and reads
Cobra's ``__complete`` answer: one candidate a line, then ``:<directive>`` (4, ``NoFileComp``: never
fall back to file names). Candidates: the verbs; the replica names (``ir/NAME`` where a ``TYPE/NAME`` is
expected, bare names for ``get ir`` and ``logs``); runtime names for ``runtime tree``; model names for
``--model``; namespaces for ``-n``. Names are read with the same kubeconfig flags the command line
carries; a cluster that cannot be read completes nothing, silently (completion must never print errors
into a shell).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from omereconcile.kubectl.client import GROUP_VERSION, REPLICA_TYPES, Client, default_namespace
from omereconcile.kubectl.context import Ctx

__all__ = ["NO_FILE_COMP", "candidates", "main"]

NO_FILE_COMP = 4

TREE: dict[str, tuple[str, ...]] = {
    "": ("get", "logs", "rollout", "instance", "runtime", "wait", "render", "diff"),
    "rollout": ("status", "get", "history", "undo", "pause", "resume", "restart"),
    "instance": ("list", "status", "retry-blocks", "release-held", "reset"),
    "runtime": ("explain", "tree"),
}
# Verbs whose first positional argument is ir/NAME.
TARGETED = {"rollout", "instance", "wait", "render"}
VALUE_FLAGS = {
    "-n",
    "--namespace",
    "--context",
    "--kubeconfig",
    "--request-timeout",
    "--timeout",
    "--events-since",
    "--startup",
    "--color",
    "-o",
    "--output",
    "--for",
    "--revision",
    "--to-revision",
    "--model",
    "--model-kind",
    "--component",
    "--kind",
    "--dry-run",
    "--ome-namespace",
    "--instances",
    "-c",
    "--container",
}

Lister = Callable[[str], list[str]]  # what ("replicas", "runtimes", "models", "namespaces") -> names


def _positionals(words: Sequence[str]) -> list[str]:
    out: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word.startswith("-"):
            skip = word in VALUE_FLAGS
        else:
            out.append(word)
    return out


def candidates(words: Sequence[str], current: str, names: Lister) -> list[str]:
    """The completions of ``current`` after ``words`` (the arguments before it)."""
    previous = words[-1] if words else ""
    if previous in ("-n", "--namespace"):
        pool = names("namespaces")
    elif previous == "--model":
        pool = names("models")
    elif previous in VALUE_FLAGS or current.startswith("-"):
        pool = []
    else:
        pos = _positionals(words)
        verb = pos[0] if pos else ""
        if not pos:
            pool = list(TREE[""])
        elif verb in ("rollout", "instance", "runtime") and len(pos) == 1:
            pool = list(TREE[verb])
        elif verb == "get" and len(pos) == 1:
            pool = list(REPLICA_TYPES)
        elif (verb == "get" and len(pos) == 2) or (verb == "logs" and len(pos) == 1):
            pool = names("replicas")
        elif verb == "runtime" and pos[1:2] == ["tree"] and len(pos) == 2:
            pool = names("runtimes")
        elif verb in TARGETED and len(pos) == (1 if verb in ("wait", "render") else 2):
            kind, slash, _ = current.partition("/")
            prefix = f"{kind}/" if slash and kind.lower() in REPLICA_TYPES else "ir/"
            pool = [prefix + n for n in names("replicas")]
        else:
            pool = []
    return [c for c in pool if c.startswith(current)]


def _flag(words: Sequence[str], *spellings: str) -> str | None:
    for i, word in enumerate(words):
        for s in spellings:
            if word == s and i + 1 < len(words):
                return words[i + 1]
            if word.startswith(s + "="):
                return word.split("=", 1)[1]
    return None


def _lister(words: Sequence[str]) -> Lister:
    kubeconfig = _flag(words, "--kubeconfig")
    context = _flag(words, "--context")
    namespace = _flag(words, "-n", "--namespace") or default_namespace(kubeconfig, context)
    client: list[Client] = []

    def names(what: str) -> list[str]:
        try:
            if not client:
                import argparse

                args = argparse.Namespace(kubeconfig=kubeconfig, context=context, namespace=namespace)
                client.append(Ctx(args, sys.stdout, sys.stderr, sys.stdin).client())
            cl = client[0]
            if what == "namespaces":
                items = cl.items("/api/v1/namespaces")
            elif what == "replicas":
                items = cl.items(cl.replicas_path())
            elif what == "runtimes":
                items = cl.items(cl.ns_path(GROUP_VERSION, "servingruntimes"))
                items += cl.items(f"/apis/{GROUP_VERSION}/clusterservingruntimes")
            else:
                items = cl.items(cl.ns_path(GROUP_VERSION, "basemodels"))
                items += cl.items(f"/apis/{GROUP_VERSION}/clusterbasemodels")
        except Exception:  # completion never fails loudly: no candidates instead
            return []
        return sorted({str((i.get("metadata") or {}).get("name")) for i in items})

    return names


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("__complete", "__completeNoDesc"):
        args = args[1:]  # the Cobra spelling, for shells that call the plugin's completion that way
    words, current = (args[:-1], args[-1]) if args else ([], "")
    for candidate in candidates(words, current, _lister(words)):
        sys.stdout.write(candidate + "\n")
    sys.stdout.write(f":{NO_FILE_COMP}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
