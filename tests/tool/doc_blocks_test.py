#!/usr/bin/env python3
"""doc_blocks_test.py DOC_BLOCKS_PY BUILD MPIRUN_SH MPIEXEC - doc_blocks.py's --align 0 leaves
out exactly the blocks that run `hclock align`, and still finds the other blocks' faults.

1. needs_align on made-up blocks: `hclock align` after VAR=value words, mpirun and its
   options, on a console transcript's continued '$ ' line; not in a comment, nor in a
   transcript's output, nor a subcommand that only starts with "align", nor a text block.
2. doc_blocks.py on a made-up tree (README.md and docs/page.md) with this build's hclock:
   with --align 1 the two blocks that run `hclock align` with a bad option are problems (in a
   build without align, "not a subcommand"; with it, "no option") as is a block with a bad
   option of `hclock specs`; with --align 0 only that block is, and the summary line counts
   the 2 blocks left out. Either build can run both halves.
Prints one line per failed check; exits 1 if there was any.
"""
import importlib.util
import os
import re
import subprocess
import sys
import tempfile

fails = []


def expect(what, got, want):
    if got != want:
        fails.append(f"{what}: got {got!r}, want {want!r}")


def needs_align_cases(db):
    cases = [
        ("sh", "hclock align traces --out aligned\n", True),
        ("sh", "python3 tests/align/gen_traces.py --nodes 3 traces\n"
               "build/bin/hclock align traces --out aligned\n", True),
        ("sh", "HCLOCK_EMULATE=1 mpirun -np 2 --mca btl self,vader -x FOO /usr/bin/hclock align a\n",
         True),
        ("console", "$ build/bin/hclock align /tmp/run --out /tmp/out \\\n"
                    "    --reference MPI_Rank_0\nhclock align: 3 nodes\n", True),
        ("sh", "hclock trace --out t -- build/bin/allreduce_mini  # then hclock align t\n", False),
        ("console", "$ hclock trace --out t -- build/bin/allreduce_mini\n"
                    "hclock align t\n", False),
        ("sh", "python3 tests/align/gen_traces.py --nodes 3 traces\n", False),
        ("sh", "hclock aligned x\nalign x\n", False),
        ("sh", "echo hclock align\n", False),
    ]
    for lang, text, want in cases:
        expect(f"needs_align({lang}, {text!r})", db.needs_align(lang, text), want)


PAGE = """# made up
```sh
hclock align traces --out aligned --no-such-align-option
```
```sh
hclock specs --no-such-specs-option
```
```console
$ mpirun -np 2 build/bin/hclock align /nonexistent/in \\
    --no-such-option-either
hclock align: output, not a command
```
```text
hclock align --not-checked-at-all
```
```sh
hclock specs  # hclock align would come next
```
"""


def run_tree(db_py, build, mpirun, mpiexec, align):
    with tempfile.TemporaryDirectory(prefix="doc_blocks_test.") as src:
        os.mkdir(os.path.join(src, "docs"))
        open(os.path.join(src, "README.md"), "w").write("# nothing to copy\n")
        open(os.path.join(src, "docs", "page.md"), "w").write(PAGE)
        r = subprocess.run([sys.executable, db_py, "--src", src, "--build", build, "--mpirun",
                            mpirun, "--mpiexec", mpiexec, "--align", str(align)],
                           capture_output=True, text=True, timeout=300)
    out = r.stdout + r.stderr
    lines = sorted({int(m) for m in re.findall(r"^FAIL: docs/page\.md:(\d+):", out, re.M)})
    left = re.search(r"(\d+) blocks left out", out)
    return r.returncode, lines, int(left.group(1)) if left else None, out


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__.splitlines()[0])
    db_py, build, mpirun, mpiexec = sys.argv[1:]
    spec = importlib.util.spec_from_file_location("doc_blocks", db_py)
    db = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(db)
    needs_align_cases(db)
    # the fences' lines in PAGE: the align blocks at 2 and 8, the bad specs block at 5
    for align, want_lines, want_left in ((1, [2, 5, 8], 0), (0, [5], 2)):
        rc, lines, left, out = run_tree(db_py, build, mpirun, mpiexec, align)
        what = f"doc_blocks.py --align {align} on the made-up page"
        n = len(fails)
        expect(f"{what}: exit status", rc, 1)
        expect(f"{what}: blocks with problems (fence lines)", lines, want_lines)
        expect(f"{what}: blocks left out", left, want_left)
        if len(fails) > n:
            fails.append(f"{what}: its output was:\n{out}")
    for f in fails:
        print("FAIL:", f)
    print(f"doc_blocks_test: {len(fails)} failed checks")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
