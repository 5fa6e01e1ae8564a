"""``omereconcile forecast``: what a change costs when it rolls, from the files ``omerender diff`` reads.

Exit codes, ``omerender diff``'s plus one: 0 no replica has a verdict ``--fail-on`` names (``omerender
diff``'s flag and words, read by the same code; default ``rolls,blocks``); 1 one does (and the forecast
says the change can complete); 2 bad input or usage; 3 an internal error; 4 the forecast says the
change cannot complete with the capacity given (a roll holds on pods that cannot be placed), whatever
``--fail-on`` says.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Final

from omereconcile.forecast.build import forecast
from omereconcile.forecast.inputs import (
    STARTUP_ANNOTATION,
    ForecastInputError,
    capacity_from_nodes,
    operator_config,
    parse_capacity,
    parse_duration,
    sizes_from_dump,
)
from omereconcile.forecast.report import headline, to_json, to_text
from omereconcile.forecast.section import Groups, forecast_section, groups_by_runtime, timeline
from omereconcile.settings import SettingsError, settings_from_configmap
from omereconcile.timeline import to_svg
from omerender.accelerators import (
    ACCELERATOR_RESOURCES_KEY,
    accelerator_resource_names,
    parse_accelerator_resources,
)
from omerender.catalog import CONFIG_MAP
from omerender.cli.diff_cmd import add_input_arguments, read_from, read_sides, replica_file, write_report
from omerender.cli.diff_flags import add_fail_on_argument, fail_on_from
from omerender.cli.io import InputError, load_objects, skipped_summary
from omerender.diff import Review, Status, fails, review_to_markdown, uid_note
from omerender.errors import OmeRenderError

__all__ = ["EXIT_SHORT_OF_CAPACITY", "add_parser", "review_groups", "run"]

EXIT_SHORT_OF_CAPACITY: Final = 4

_EPILOG = f"""\
which replicas roll: exactly as omerender diff decides, from the same arguments (see omerender diff
--help). Each
rolling replica is run through the change by the reconciler's own planner in a simulated cluster with
a simulated clock: pods start after the start-up time, become Ready and enter rotation.

revision names: as omerender diff prints them; a replica without metadata.uid in its files (files
from git have none) is hashed with an empty uid unless --uid gives it (NAMESPACE/NAME=UID,
repeatable; a bare UID for a single replica), and the output notes it once: the cluster's names will
differ, the verdicts and the forecast do not.

start-up time: --startup, or per runtime the annotation {STARTUP_ANNOTATION} on the
(Cluster)ServingRuntime the replica renders with after the change ("5m", "90s", "1h30m", seconds).

exit status: 0 no replica has a verdict --fail-on names (omerender diff's words; default rolls,blocks;
none: never); 1 one does; 2 bad input or usage; 3 internal error; {EXIT_SHORT_OF_CAPACITY} the change cannot
complete with the capacity given (whatever --fail-on says).

operator settings: an inferenceservice-config ConfigMap (namespace ome) among the --after objects
gives the planner its settings (instanceReadyTimeout, grace periods, updateRetry) and the accelerator
names, as the reconciler reads them; without one, the stuck-pod grace (60s) and retry ladder of OME's
chart.

multi-pod Instances (leader and workers) are listed as not covered rather than guessed.

examples:
  omereconcile forecast --before main/catalog --before main/replicas --after pr/catalog \\
      --after pr/replicas --startup 5m
  omereconcile forecast --before main/ --after pr/ --replicas-from irs.yaml --capacity 4x8 -o markdown
"""


def add_parser(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "forecast",
        help="what a catalog change costs when it rolls: steps, extra pods and GPUs, serving floor, time",
        description="Forecast each rolling replica's roll with the real planner in a simulated cluster.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_input_arguments(p)
    p.add_argument("--startup", default="5m", help="pod start-up time until Ready (default 5m)")
    p.add_argument(
        "--shutdown",
        default="30s",
        help="time from a pod's deletion until it is gone and its GPUs are free (default 30s, "
        "Kubernetes' default termination grace)",
    )
    p.add_argument(
        "--replicas-from",
        metavar="FILE",
        help="current sizes from a `kubectl get ir -A -o yaml` dump (default: spec.replicas of the files)",
    )
    cap = p.add_mutually_exclusive_group()
    cap.add_argument("--capacity", metavar="NODESxGPUS", help="GPU nodes the replicas share, like 4x8")
    cap.add_argument("--nodes-from", metavar="FILE", help="capacity from a `kubectl get nodes -o yaml` dump")
    p.add_argument(
        "--accelerator-resources",
        metavar="JSON",
        help="the accelerator resource names OME counts, like '[\"nvidia.com/gpu\"]' (default: the "
        "acceleratorResources of an inferenceservice-config ConfigMap among the --after objects, else NVIDIA)",
    )
    p.add_argument(
        "--sequential",
        action="store_true",
        help="roll one replica after another (default: all at once, as the reconciler does)",
    )
    p.add_argument(
        "--output",
        "-o",
        choices=("text", "json", "markdown", "review"),
        default="text",
        help="text, json, markdown (the forecast section), or review: the whole pull-request comment, "
        "omerender diff's review grouped by cause with the forecast of those groups in it (default text)",
    )
    p.add_argument(
        "--svg",
        metavar="PATH",
        help="also write the roll drawn as an SVG file (the groups over time, the serving floor and the "
        "extra GPUs): the picture of -o markdown's Mermaid diagram, for CI systems that show files",
    )
    p.add_argument(
        "--report",
        metavar="PATH",
        help="also write omerender diff's full report, replica by replica, nothing cut (JSON for a .json "
        "name, markdown for .md), as omerender diff --report writes it",
    )
    add_fail_on_argument(p)
    # Warnings of the shared readers name this program, not omerender.
    p.set_defaults(func=run, prog_prefix="omereconcile forecast")


def _forecast_code(args: argparse.Namespace) -> int:
    fail_on = fail_on_from(args.fail_on)
    sides = read_sides(args, "forecast")
    config = operator_config(sides.after_objects)
    try:
        settings = None if config is None else settings_from_configmap(config)
    except SettingsError as exc:
        where = next(
            (
                read_from(o)
                for o in sides.after_objects
                if o.get("kind") == "ConfigMap" and (o.get("metadata") or {}).get("name") == CONFIG_MAP
            ),
            None,
        )
        raise ForecastInputError(
            f"{f'{where}: ' if where else ''}ConfigMap ome/{CONFIG_MAP}: {exc}"
        ) from None
    try:
        given = args.accelerator_resources
        if given is None and config is not None:
            given = config.get(ACCELERATOR_RESOURCES_KEY)
        names = accelerator_resource_names(parse_accelerator_resources(given))
    except ValueError as exc:
        raise ForecastInputError(f"--accelerator-resources: {exc}; give a JSON list of names") from None
    capacity = None
    if args.capacity is not None:
        capacity = parse_capacity(args.capacity)
    elif args.nodes_from is not None:
        capacity = capacity_from_nodes(load_objects([args.nodes_from]), names)
    sizes = sizes_from_dump(load_objects([args.replicas_from])) if args.replicas_from else None
    diffs = sides.diff()
    write_report(diffs, args, fail_on, sides.notes, uid_notes=True)
    result = forecast(
        diffs,
        sides.before,
        sides.after,
        sides.after_objects,
        startup_seconds=parse_duration(args.startup, "--startup"),
        sizes=sizes,
        capacity=capacity,
        gpu_names=names,
        concurrent=not args.sequential,
        shutdown_seconds=parse_duration(args.shutdown, "--shutdown"),
        settings=settings,
        progress=_progress if sys.stderr.isatty() else None,
    )
    if sys.stderr.isatty():
        sys.stderr.write("\r\033[K")
    # Files from git carry no uid: say once that the revision names are not the cluster's.
    note = uid_note(diffs)
    if args.output == "json":
        notices = {d.key: d.uid_notice for d in diffs if d.uid_notice is not None}
        doc = to_json(result, uid_note=note, uid_notices=notices)
        # As omerender diff's JSON says them: the verdicts that fail, and whether one is there.
        doc["failOn"] = [s.value for s in Status if s in fail_on]
        doc["fails"] = fails(diffs, fail_on)
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    elif args.output == "markdown":
        sys.stdout.write(forecast_section(result, groups_by_runtime(diffs), uid_note=note))
    elif args.output == "review":
        # One comment: the diff's groups, and the forecast drawn by the same groups. The comment shows
        # no revision names, so it carries no uid note (the diff's rule).
        review = sides.review(diffs, fail_on)
        # A change that rolls nothing and places nothing has no forecast to show.
        shown = result.replicas or result.pending or result.unplaced
        sections = [forecast_section(result, review_groups(review), in_review=True)] if shown else []
        sys.stdout.write(review_to_markdown(review, extra_sections=sections, full_report=args.report))
    else:
        sys.stdout.write(to_text(result, uid_note=note))
    if args.svg is not None:
        drawn: Groups = (
            review_groups(sides.review(diffs, fail_on))
            if args.output == "review"
            else groups_by_runtime(diffs)
        )
        with open(args.svg, "w", encoding="utf-8") as fh:
            fh.write(to_svg(timeline(result, drawn)))
    print(f"forecast: {headline(result)}", file=sys.stderr)
    if result.short_of_capacity:
        return EXIT_SHORT_OF_CAPACITY
    return 1 if fails(diffs, fail_on) else 0


def _progress(message: str) -> None:
    """One line on a terminal's standard error, rewritten in place."""
    sys.stderr.write(f"\r\033[Kforecast: {message}")
    sys.stderr.flush()


def review_groups(review: Review) -> list[tuple[str, tuple[tuple[str, str], ...]]]:
    """The review's groups that roll, as :func:`forecast_section` takes them: ``(label, replicas)``,
    each label numbered as the comment numbers its group (two groups can share a label when they differ
    only below the change lines it names). Only rolling verdicts have a roll to forecast (a block keeps
    its pods; new replicas are placed by the forecast itself and named there)."""
    return [
        (f"{i}. {_short(g.label)}", g.replicas)
        for i, g in enumerate(review.groups, 1)
        if g.status is Status.ROLLS
    ]


# A drawn group's label: the comment's group heading holds the whole of it under the same number, and
# a long label covers the bars in Mermaid's gantt (its section names share the bars' row).
_LABEL_CHARS = 44


def _short(label: str) -> str:
    return label if len(label) <= _LABEL_CHARS else label[: _LABEL_CHARS - 1].rstrip(" ,:") + "…"


def run(args: argparse.Namespace) -> int:
    try:
        code = _forecast_code(args)
        sys.stdout.flush()
        for (
            line
        ) in skipped_summary():  # what the reader skipped, said once at the end as omerender diff says it
            print(f"omereconcile forecast: note: {line}", file=sys.stderr)
        return code
    except ForecastInputError as exc:
        # A replica's problem names its file, as every other input error does.
        files = [f for f in dict.fromkeys(replica_file(*key.split("/", 1)) for key in exc.replicas) if f]
        where = f" ({', '.join(files)})" if files else ""
        print(f"omereconcile forecast: {exc}{where}", file=sys.stderr)
        return 2
    except (InputError, OmeRenderError) as exc:
        print(f"omereconcile forecast: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"omereconcile forecast: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # the last resort: one line, not a traceback
        print(
            f"omereconcile forecast: internal error ({type(exc).__name__}: {exc}): this is a bug; please "
            "report it with the command line and its input files",
            file=sys.stderr,
        )
        return 3
