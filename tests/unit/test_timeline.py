"""The neutral roll drawing (omereconcile.timeline): Mermaid text and our own SVG from steps and a
floor/extra-GPU series, on hand-made inputs."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from omereconcile.timeline import Point, Step, Timeline, bins, round_width, to_mermaid, to_svg

TL = Timeline(
    "Rollout forecast",
    (
        Step("router image: v0.2.3 -> v0.2.4 (150)", 0.0, 1200.0, "done"),
        Step("engine args #2; <tuned>", 300.0, 900.0, "held"),
    ),
    (Point(0.0, 10, 0), Point(60.0, 9, 4), Point(600.0, 10, 2), Point(1200.0, 10, 0)),
    of=10,
)


def _svg_texts(svg: str) -> list[str]:
    root = ET.fromstring(svg)  # well-formed XML, or this raises
    return ["".join(e.itertext()) for e in root.iter("{http://www.w3.org/2000/svg}text")]


def test_svg_is_well_formed_and_shows_each_step_label_escaped() -> None:
    texts = _svg_texts(to_svg(TL))
    assert "router image: v0.2.3 -> v0.2.4 (150)" in texts
    assert "engine args #2; <tuned>" in texts  # escaped in the file, read back as written
    assert "20m" in texts
    assert "10m" in texts
    assert "serving Instances of 10 (line, right scale)" in texts
    assert "extra GPUs (area, left scale)" in texts


def test_svg_bars_are_placed_on_the_time_axis() -> None:
    root = ET.fromstring(to_svg(TL))
    bars = [
        e
        for e in root.iter("{http://www.w3.org/2000/svg}rect")
        if e.find("{http://www.w3.org/2000/svg}title") is not None
    ]
    assert len(bars) == 2
    full, held = (float(b.get("width", "0")) for b in bars)
    assert abs(held / full - 0.5) < 0.01  # 600 s of 1200 s
    assert held > 0
    assert float(bars[1].get("x", "0")) > float(bars[0].get("x", "0"))
    assert bars[1].get("fill") != bars[0].get("fill")  # a held step looks different


def test_mermaid_names_each_step_without_the_marks_mermaid_reads() -> None:
    text = to_mermaid(TL)
    assert text.count("```mermaid") == 3  # the steps, the extra GPUs, the floor (it moves)
    assert "section router image v0.2.3 -> v0.2.4 (150)" in text  # ':' ends a task name in a gantt
    assert "section engine args no. 2, <tuned>" in text
    assert ":crit, s1, 300, 900" in text  # the held step, in seconds from the change
    assert "axisFormat %M:%S" in text  # under an hour


def test_the_floor_has_its_own_chart_and_scale_and_a_steady_floor_is_said_in_words() -> None:
    """Drawn on the GPUs' scale (hundreds) a floor of a few Instances lies flat along zero: it gets a
    chart of its own, scaled to the Instances, or when it never moves, a few words in the GPUs' title."""
    moving = to_mermaid(
        Timeline("t", (Step("a", 0, 60),), (Point(0, 3, 0), Point(10, 2, 300), Point(50, 3, 0)), of=3)
    )
    charts = moving.split("```mermaid")[2:]
    assert [c.splitlines()[2] for c in charts] == [
        '    title "extra GPUs"',
        '    title "serving Instances of 3, the lowest in each slice"',
    ]
    assert '    y-axis "GPUs" 0 --> 300' in charts[0]
    assert '    y-axis "Instances" 0 --> 3' in charts[1]
    steady = to_mermaid(
        Timeline("t", (Step("a", 0, 60),), (Point(0, 3, 0), Point(10, 3, 300), Point(50, 3, 0)), of=3)
    )
    assert steady.count("```mermaid") == 2
    assert '    title "extra GPUs; serving Instances of 3: 3 throughout"' in steady
    assert "line [" not in steady


def test_bins_keep_the_lowest_floor_and_highest_extra_of_each_slice() -> None:
    out = bins(TL, count=4)  # slices of 300 s
    assert out == [(0.0, 9, 4), (300.0, 9, 4), (600.0, 10, 2), (900.0, 10, 2)]  # 600 s: the new value


def test_xychart_series_match_the_bins() -> None:
    text = to_mermaid(Timeline("t", (Step("a", 0, 60),), (Point(0, 2, 0), Point(30, 1, 1)), of=2))
    assert "bar [0, " in text
    assert "line [2, " in text
    assert text.rstrip().endswith("```")


def test_xychart_ends_with_the_state_at_the_end_of_the_roll() -> None:
    """The last slice starts before the roll ends; the chart's last point is the end itself, where the
    extra GPUs are given back."""
    text = to_mermaid(TL)
    assert '"18m", "20m"]' in text  # round slices of 2 minutes, then the end at 1200 s
    assert text.count("bar [") == 1
    bar = next(line for line in text.splitlines() if line.strip().startswith("bar ["))
    assert bar.strip().endswith(", 0]")


def test_round_widths_cut_the_roll_into_at_most_twelve_slices() -> None:
    assert round_width(332.0) == 30.0  # 5m32s: 12 slices of 30 s
    assert round_width(1200.0) == 120.0
    assert round_width(59.0) == 5.0
    assert round_width(10 * 86400.0) == 86400.0
    assert bins(TL, width=round_width(TL.end))[1][0] == 120.0


def test_a_short_remainder_joins_the_last_slice_so_no_two_labels_crowd_the_end() -> None:
    tl = Timeline("t", (Step("a", 0, 332),), (Point(0, 3, 0), Point(1, 2, 288), Point(331, 3, 0)), of=3)
    text = to_mermaid(tl)
    assert '"5m", "5m30s", "5m32s"]' not in text
    assert '"4m30s", "5m", "5m32s"]' in text
    # A dip inside the stretched last slice still shows.
    dip = Timeline("t", (Step("a", 0, 332),), (Point(0, 3, 0), Point(331, 1, 0), Point(332, 3, 0)), of=3)
    assert bins(dip, width=30.0)[-1] == (300.0, 1, 0)


def test_svg_cuts_long_labels_to_the_column_keeping_them_whole_in_the_tooltip() -> None:
    label = "1. rolls: containers[ome-container].env (30 added), containers[ome-container].image"
    svg = to_svg(Timeline("t", (Step(label, 0, 332),), (Point(0, 3, 0), Point(1, 3, 8)), of=3))
    texts = _svg_texts(svg)
    assert "1. rolls: containers[ome-container].env…" in texts
    titles = ["".join(e.itertext()) for e in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}title")]
    assert label in titles
    # Ticks at round times, then the end (5m would crowd it): not 1m23s, 2m46s, … (quarters of 5m32s).
    at = texts.index("0s")
    assert texts[at : at + 6] == ["0s", "1m", "2m", "3m", "4m", "5m32s"]
