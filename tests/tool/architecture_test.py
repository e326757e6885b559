#!/usr/bin/env python3
"""architecture_test.py ROOT - docs/architecture.md names the families' members as they are.

Each row of the layer table that lists its members "one per file: a, b, c; ..." (sync
algorithms, offset estimators, base clocks, bench schemes, align's trace formats) names
files that exist (src/LAYER/NAME.c; a parenthesis after a name is its gloss, not a member),
and every member of the layer's table file (types.def, schemes.def, patterns.def) that is
defined in that layer's folder (`const struct X NAME_TYPE_member = {`, or `member_NAME`) is
defined in a file the row names.
One line per problem, exit 1; "ok" and exit 0."""
import os
import re
import sys

root = sys.argv[1]
doc = open(os.path.join(root, "docs", "architecture.md"), encoding="utf-8").read()
rows = dict(re.findall(r"^\| `([a-z]+)` \| (.*) \|$", doc, re.M))
problems, seen = [], 0


def listed(text):
    """the names after "one per file" (":" or an opening "(" first), up to the first ';'
    outside a gloss in parentheses"""
    m = re.search(r"one per file\s*[:(]?\s*(.*)", text)
    if not m:
        return None
    out, depth = "", 0
    for ch in m.group(1):
        if ch == ";" and depth == 0:
            break
        depth += (ch == "(") - (ch == ")")
        out += ch if depth == 0 and ch != ")" else ""
    return [n for n in (re.sub(r"[`\s]", "", x) for x in out.split(",")) if n]


for layer, text in sorted(rows.items()):
    names = listed(text)
    if names is None:
        continue
    seen += 1
    folder = os.path.join(root, "src", layer)
    for n in names:
        if not os.path.isfile(os.path.join(folder, n + ".c")):
            problems.append(f"docs/architecture.md: the {layer} row names '{n}', but there is no "
                            f"src/{layer}/{n}.c")
    for d in ("types.def", "schemes.def", "patterns.def"):
        path = os.path.join(folder, d)
        if not os.path.isfile(path):
            continue
        members = re.findall(r"^[A-Z_]+\((\w+)\)", open(path).read(), re.M)
        for mem in members:
            where = None
            for f in sorted(os.listdir(folder)):
                if f.endswith(".c") and re.search(
                        r"^const struct \w+ (\w+_" + mem + r"|" + mem + r"_\w+) = \{",
                        open(os.path.join(folder, f), encoding="utf-8").read(), re.M):
                    where = f[:-2]
            if where is not None and where not in names:
                problems.append(f"docs/architecture.md: the {layer} row does not name "
                                f"{where} (src/{layer}/{where}.c, the {d} member '{mem}')")
if seen < 5:
    problems.append(f"docs/architecture.md: {seen} rows list their members 'one per file', "
                    "want 5 (sync, offset, clock, bench, align)")
for p in problems:
    print(p)
print("ok: docs/architecture.md names every family member's file" if not problems else
      f"architecture_test: {len(problems)} problem(s)")
sys.exit(1 if problems else 0)
