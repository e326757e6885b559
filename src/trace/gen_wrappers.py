#!/usr/bin/env python3
"""gen_wrappers.py [--fortran=MPIFORT] PREPROCESSED_MPI_H HANDWRITTEN.c OUT_DIR [MPI_LIBRARY...] -
the tracer's generated part.

Input: the MPI library's mpi.h run through the C preprocessor (so that exactly what this
library declares is seen, Open MPI's or MPICH's), and the hand-written wrappers (calls.c):
every `int MPI_Name(` defined there is left to it.

Output, in OUT_DIR:
  trace_funcs.h    enum trace_func: TF_MPI_Name for every int MPI_ function that has a PMPI_
                   twin (the hand-written ones included), TF_COUNT
  trace_funcs.c    trace_func_names[TF_COUNT]
  trace_wrappers.c for every such function not hand-written: the wrapper recording enter and
                   leave around PMPI_Name (tracer.h's trace_enter / trace_leave)
With MPI_LIBRARY given (the C library a program links, e.g. libmpich.so), a function whose
PMPI_ twin that library does not define is left out: mpi.h may declare functions that live in
another library (MPICH's MPI_Status_f082f and kin are in libmpichfort), and a reference to
them would keep a program from linking with -lhclock_trace.
Functions with variable arguments or an unnamed parameter are not wrapped (they reach the MPI
library directly, untraced) and are listed in a comment at the top of trace_wrappers.c.

With --fortran=MPIFORT (this MPI's Fortran compiler wrapper), also, from the symbols of the
Fortran libraries it links (mpif90 --showme:link or -show):
  trace_fnames.h    for every function of trace_funcs.h: FP_name (its index in
                    fortran_fwd_names), FTF_name (its TF_ value) and FNAMES_name(F, f), which
                    applies F(f, SYMBOL) to each Fortran symbol the tracer defines for it
  trace_fwrappers.c fortran_fwd_names (the library's PMPI entry each wrapper forwards to) and,
                    for every function fcalls.c does not wrap by hand, a wrapper recording
                    enter and leave around it, which forwards the call's words unchanged
A function is wrapped in Fortran when the Fortran library defines its PMPI entry
(pmpi_name_ ...) and calls the C PMPI_ functions directly: Open MPI. One whose Fortran library
calls the C MPI_Name (MPICH) is left alone: the C wrapper records it once.
"""
import os
import re
import subprocess
import sys

argv = sys.argv[1:]
fortran = None
if argv and argv[0].startswith("--fortran="):
    fortran = argv.pop(0)[len("--fortran="):]
src, hand, out = argv[0:3]
libs = argv[3:]
text = open(src).read()
# one declaration per match: int NAME(PARAMS) [attributes];
decl = re.compile(r"\bint\s+(P?MPI_\w+)\s*\(")
funcs = {}
for m in decl.finditer(text):
    name = m.group(1)
    # the parameter list up to the matching parenthesis
    i, depth = m.end(), 1
    while i < len(text) and depth:
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    params = " ".join(text[m.end():i - 1].split())
    # a declaration ends with ';' after optional attributes; a definition has '{'
    rest = text[i:i + 400]
    end = re.match(r"\s*(?:__attribute__\s*\(\(.*?\)\)\s*)*;", rest, re.S)
    if not end:
        continue
    funcs.setdefault(name, params)

# what the MPI library defines (None: not known, everything declared is taken)
defined = None
for lib in libs:
    try:
        nm = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True)
    except OSError:
        defined = None
        break
    if nm.returncode != 0:
        continue  # a static archive or a linker script: no dynamic symbols to read
    defined = (defined or set()) | {l.split()[-1] for l in nm.stdout.splitlines() if l.strip()}
handwritten = set(re.findall(r"^int (MPI_\w+)\(", open(hand).read(), re.M))
names, wrappers, skipped, absent = [], [], [], []


def split_params(p):
    out, depth, cur = [], 0, ""
    for ch in p:
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(ch, 0)
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


for name in sorted(funcs):
    if not name.startswith("MPI_") or "P" + name not in funcs:
        continue
    if defined is not None and "P" + name not in defined and name not in handwritten:
        absent.append(name)
        continue
    names.append(name)
    if name in handwritten:
        continue
    params = funcs[name]
    ps = [] if params in ("void", "") else split_params(params)
    args = []
    ok = True
    for p in ps:
        if p == "...":
            ok = False
            break
        q = re.sub(r"\[[^\]]*\]", "", p).strip()
        m = re.search(r"([A-Za-z_]\w*)\s*$", q)
        # a parameter with only a type (no name) ends in a type keyword or '*'
        if not m or q.endswith("*") or len(q.split()) < 2 and "*" not in q:
            ok = False
            break
        args.append(m.group(1))
    if not ok:
        skipped.append(name)
        continue
    wrappers.append(
        f"int {name}({params})\n{{\n\tstruct trace_call c;\n"
        f"\tif (!trace_enter(TF_{name}, &c))\n\t\treturn P{name}({', '.join(args)});\n"
        f"\tint rc = P{name}({', '.join(args)});\n\ttrace_leave(&c);\n\treturn rc;\n}}\n")

os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "trace_funcs.h"), "w") as f:
    f.write("/* generated by src/trace/gen_wrappers.py from this MPI library's mpi.h */\n")
    f.write("#ifndef HCLOCK_TRACE_FUNCS_H\n#define HCLOCK_TRACE_FUNCS_H\n\nenum trace_func {\n")
    for n in names:
        f.write(f"\tTF_{n},\n")
    f.write("\tTF_COUNT\n};\n\nextern const char *const trace_func_names[TF_COUNT];\n\n#endif\n")
with open(os.path.join(out, "trace_funcs.c"), "w") as f:
    f.write("/* generated by src/trace/gen_wrappers.py */\n#include \"trace_funcs.h\"\n\n")
    f.write("const char *const trace_func_names[TF_COUNT] = {\n")
    for n in names:
        f.write(f"\t\"{n}\",\n")
    f.write("};\n")
with open(os.path.join(out, "trace_wrappers.c"), "w") as f:
    f.write("/* generated by src/trace/gen_wrappers.py: enter/leave around every MPI call that\n"
            " * calls.c does not wrap by hand. Not wrapped (variable arguments or an unnamed\n"
            " * parameter): " + (", ".join(skipped) or "none") + ".\n * Declared in mpi.h, "
            "but their PMPI_ twin is not in the MPI library: " + (", ".join(absent) or "none") +
            " */\n")
    f.write("#include <mpi.h>\n\n#include \"trace/tracer.h\"\n\n")
    f.write("/* a program may call deprecated functions: they are wrapped like any other */\n"
            "#pragma GCC diagnostic ignored \"-Wdeprecated-declarations\"\n\n")
    f.write("\n".join(wrappers))
if fortran is not None:
    import gen_fortran
    gen_fortran.generate(fortran, funcs, names, split_params,
                         os.path.join(os.path.dirname(os.path.abspath(hand)), "fcalls.c"), out)
print(f"gen_wrappers: {len(names)} functions, {len(wrappers)} generated, "
      f"{len(names) - len(wrappers) - len(skipped)} hand-written, {len(skipped)} not wrapped, "
      f"{len(absent)} not in the MPI library")
