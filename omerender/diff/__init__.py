"""What a change to the catalog (or to the replicas) does to each InferenceReplica: the CI snapshot diff.

:func:`compare` takes both sides as :func:`omerender.load` returns them (or their paths) and gives the
verdicts ``omerender diff`` gives. The seed example's catalog against the same catalog without its
runtime, from the repository's root (CI runs this as a doctest)::

    >>> from omerender import load
    >>> from omerender.diff import compare
    >>> before = load("examples/catalog", "examples/llama-pool.yaml")
    >>> after = load("examples/catalog/llama-3-2-1b-instruct.yaml", "examples/llama-pool.yaml")
    >>> for d in compare(before, after):
    ...     print(d.key, d.status.value, "-", d.headline)
    llama-demo/llama-pool blocks - blocks RuntimeSelectionFailed

Paths work too: ``compare("old/catalog", "new/catalog", assume_models_ready=True)``. For replicas and
catalogs already built, :func:`diff_replicas` takes ``{(namespace, name): replica}`` maps and the two
:class:`~omerender.Catalog` objects.

:func:`diff_replicas` renders every replica against the objects before and after a change and says,
per replica, what OME would do:

=============================  ==============================================================
status (``--fail-on`` name)     meaning
=============================  ==============================================================
``rolls``                      renders to another revision: every Instance rolls to it
``blocks``                     rendered before (or was unknown until downloaded), cannot render
                               now; OME keeps the running pods as they are
``unblocks``                   blocked (or unknown until downloaded) before, renders now
``new``                        only among the after replicas (rendered, blocked or unknown)
``removed``                    only among the before replicas: OME tears its pods down
``unknown``                    "unknown until downloaded": its model, assumed Ready, has no
                               format name, and OME reads the format from the weights, so the
                               runtime it will select is unknown (the words and rule of
                               ``omerender lint --assume-models-ready``)
``still-blocks``               blocked before and after (for the same or another reason): the
                               replica never rendered, so the change blocks nothing
``unchanged``                  renders to the same revision: nothing rolls
=============================  ==============================================================

:attr:`ReplicaDiff.changed` says whether the verdict is a change (a replica unknown on both sides, or
blocked on both, is none); the CLI's exit status is 1 when a replica has a verdict its ``--fail-on``
names (``rolls,blocks`` by default), as dyff's ``--set-exit-code``.

Each rolling replica comes with a semantic diff of its runners' pod templates. Keyed lists are
compared by identity, not position (Kubernetes' strategic-merge keys): containers, init and ephemeral
containers, volumes, imagePullSecrets, resourceClaims and schedulingGates by ``name``; hostAliases by
``ip``; a container's env by ``name``, volumeMounts by ``mountPath`` (a volume may be mounted twice),
volumeDevices by ``devicePath`` and ports by ``name`` (``containerPort/protocol`` when unnamed); any
other list whose items all carry a distinct ``name`` by that name. A list of scalars (``args``,
``command``) is aligned as a sequence (:class:`difflib.SequenceMatcher`): one inserted argument is one
``added`` entry, not a change of every later index. Other lists (tolerations) are positional.

Order still matters to OME: the revision hashes the pod spec's bytes, so reordering env changes the
revision although no value changed. Such a replica ``rolls``, and its diff says ``order changed`` for
that list, which is the only thing that differs.

Paths read like ``runner default: containers[ome-container].env[MODEL_PATH].value: "/a" -> "/b"``:
keyed entries in brackets, pod spec fields without their ``spec.`` prefix, ``metadata.`` kept. They
are listed in natural order (:func:`natural_key`: ``command[2]`` before ``command[10]``).

A replica that renders from another runtime than before (a new runtime outranks the old one, or the
old one is disabled) says ``runtime changed from <Kind> <old> to <Kind> <new>`` before its field
changes; each side's runtime is in the JSON output.

Pure: no I/O. The CLI (``omerender diff``) loads the objects and prints :func:`to_text`,
:func:`to_json` or :func:`to_markdown`. This is the only omerender module using deepdiff (``tools``
extra), imported when a template diff is computed, so the types and the reports import without it (the
reconciler image, which installs only the ``reconcile`` extra, imports ``omereconcile.forecast``).
"""

from __future__ import annotations

from omerender.diff.catalog_changes import CatalogChange, catalog_changes
from omerender.diff.comment import to_markdown as review_to_markdown
from omerender.diff.compare import Side, compare
from omerender.diff.outcome import Blocked, Outcome, outcome
from omerender.diff.replicas import ReplicaDiff, diff_replica, diff_replicas
from omerender.diff.reports import (
    DEFAULT_MARKDOWN_CHARS,
    REPORT_API_VERSION,
    counts,
    fails,
    summary,
    to_json,
    to_markdown,
    to_text,
    uid_note,
)
from omerender.diff.review import Cost, Group, Review, build_review
from omerender.diff.templates import (
    Change,
    natural_key,
    normalise_template,
    template_changes,
)
from omerender.diff.verdicts import DEFAULT_FAIL_ON, LINE_LIMIT, Status, parse_fail_on

__all__ = [
    "DEFAULT_FAIL_ON",
    "DEFAULT_MARKDOWN_CHARS",
    "LINE_LIMIT",
    "REPORT_API_VERSION",
    "Blocked",
    "CatalogChange",
    "Change",
    "Cost",
    "Group",
    "Outcome",
    "ReplicaDiff",
    "Review",
    "Side",
    "Status",
    "build_review",
    "catalog_changes",
    "compare",
    "counts",
    "diff_replica",
    "diff_replicas",
    "fails",
    "natural_key",
    "normalise_template",
    "outcome",
    "parse_fail_on",
    "review_to_markdown",
    "summary",
    "template_changes",
    "to_json",
    "to_markdown",
    "to_text",
    "uid_note",
]
