#!/usr/bin/env python3
"""waitplot_xml_test.py TEST_WAITPLOT - the plots of src/trace/waitplot.c are well-formed SVG.

Runs test_waitplot with a directory to leave its SVGs in, then parses every one of them with
xml.etree: the root is an <svg> of the SVG namespace with its size, every rect and line has
finite, non-negative sizes, the matrix has its two panels (messages, bytes) and the small
case's two cells in each, the wait states' bars hold no Wrong Order segment. Exit 0 when all
hold, 1 with one line per failure.
"""
import glob
import math
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def classes(e):
    return (e.get("class") or "").split()


def check(path, fail):
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        fail(f"{path}: not well-formed XML: {e}")
        return
    if root.tag != NS + "svg" or not root.get("width") or not root.get("height"):
        fail(f"{path}: the root is {root.tag}, not an <svg> with its width and height")
    for e in root.iter():
        if e.tag not in (NS + "rect", NS + "line"):
            continue
        for a in ("x", "y", "width", "height", "x1", "x2", "y1", "y2"):
            v = e.get(a)
            if v is None:
                continue
            x = float(v)
            if not math.isfinite(x) or (a in ("width", "height") and x < 0):
                fail(f"{path}: a {e.tag[len(NS):]} with {a}={v}")
    name = os.path.basename(path)
    case = os.path.basename(os.path.dirname(path))
    if name == "comm_matrix.svg":
        panels = {g.get("id"): g for g in root.iter(NS + "g") if g.get("id")}
        if set(panels) != {"messages", "bytes"}:
            fail(f"{path}: panels {sorted(panels)}, expected bytes and messages")
        if case == "small":
            for pid, g in panels.items():
                cells = [r for r in g.iter(NS + "rect") if "cell" in classes(r)]
                if len(cells) != 2:
                    fail(f"{path}: {len(cells)} cells in the {pid} panel, expected 2")
    elif name == "wait_states.svg":
        for e in root.iter(NS + "rect"):
            if "seg" in classes(e) and "wrong_order" in classes(e):
                fail(f"{path}: a Wrong Order segment is stacked")
        if case == "small" and len([g for g in root.iter(NS + "g")
                                    if "bar" in classes(g)]) != 4:
            fail(f"{path}: not 4 bars")


def main():
    failures = []
    with tempfile.TemporaryDirectory(prefix="waitplot_xml.") as d:
        r = subprocess.run([sys.argv[1], d], capture_output=True, text=True)
        if r.returncode:
            failures.append(f"test_waitplot failed ({r.returncode}): {r.stderr.strip()}")
        svgs = sorted(glob.glob(os.path.join(d, "*", "*.svg")))
        if len(svgs) < 7:
            failures.append(f"{len(svgs)} SVG files written, expected at least 7")
        for p in svgs:
            check(p, failures.append)
    for f in failures:
        print("waitplot_xml_test: " + f, file=sys.stderr)
    if not failures:
        print(f"waitplot_xml_test: {len(svgs)} SVG files parsed, all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
