"""gen_fortran.py - the tracer's Fortran wrappers, generated (called by gen_wrappers.py with
--fortran=MPIFORT; its docstring says what comes out).

What the Fortran libraries define and call is read from their dynamic symbols:
  - the entry points of a function: mpi_name_, mpi_name, mpi_name__, MPI_NAME (the
    manglings of mpif.h and `use mpi`), and, where the mpi_f08 library calls it, Open MPI's
    ompi_name_f (the C function behind mpi_name_, which its mpi_name_f08_ calls too:
    interposing it records the mpi_f08 calls with the same wrapper);
  - the PMPI entry the wrapper forwards to: pmpi_name_ (or another mangling), so the
    arguments stay the library's to read (MPI_IN_PLACE, MPI_STATUS_IGNORE, LOGICALs,
    1-based indices);
  - whether the Fortran library calls the C MPI_Name (undefined there): MPICH's bindings do,
    so the C wrapper records the call and no Fortran wrapper is made (no double records);
  - the mpi_f08 entries (mpi_name_f08_, mpi_name_f08ts_) that reach no other wrapper: Open
    MPI's that call the pmpi_name_ Fortran entry (those with LOGICAL arguments: MPI_Test,
    MPI_Cart_create, ...) and MPICH's that call the C PMPI_ function (those without a
    buffer: MPI_Init, MPI_Wait, MPI_Test, ...; its others call the C MPI_ function). Wrapped
    too, forwarding to the library's pmpi_name_f08_ (pmpir_name_f08_ in MPICH): one that
    fcalls.c wraps by hand through fcalls_f08.c's f8w_name, given an IERROR of its own when
    the program leaves the optional one out; any other records enter and leave.
"""
import os
import re
import shlex
import subprocess

SLACK = 2  # words forwarded beyond the count the C prototype gives (see fortran.h)


def _run(cmd):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True)
    except OSError:
        return None
    return r.stdout if r.returncode == 0 else None


def _libraries(fc):
    """the shared libraries the Fortran wrapper links, as paths"""
    link = _run([fc, "--showme:link"]) or _run([fc, "-show"]) or ""
    dirs, names, paths = [], [], []
    for tok in shlex.split(link):
        if tok.startswith("-L"):
            dirs.append(tok[2:])
        elif tok.startswith("-l"):
            names.append(tok[2:])
        elif tok.endswith(".so") and os.path.isfile(tok):
            paths.append(tok)
    cache = _run(["/sbin/ldconfig", "-p"]) or ""
    for n in names:
        f = next((os.path.join(d, f"lib{n}.so") for d in dirs
                  if os.path.isfile(os.path.join(d, f"lib{n}.so"))), None)
        if f is None:
            m = re.search(rf"^\s*lib{re.escape(n)}\.so\b.*=> (\S+)$", cache, re.M)
            f = m.group(1) if m else None
        if f:
            paths.append(f)
    return paths


def _symbols(lib, which):
    out = _run(["nm", "-D", which, lib]) or ""
    return {l.split()[-1].split("@")[0] for l in out.splitlines() if l.strip()}


def decide(names, defined, undef):
    """for each C function name of names, from the Fortran libraries' defined and undefined
    symbols: the PMPI entries to forward to (mpif.h's, mpi_f08's: "" none), the Fortran
    symbols to export a wrapper as (mpif.h's and ompi_name_f; mpi_f08's: [] none), and the
    functions left to the C wrappers"""
    fwd, fwd8, syms, syms8, calls_c = {}, {}, {}, {}, []
    for name in names:
        b = name[4:].lower()
        up = b.upper()
        fwd[name] = next((s for s in (f"pmpi_{b}_", f"pmpi_{b}", f"pmpi_{b}__", f"PMPI_{up}")
                          if s in defined), "")
        s = [s for s in (f"mpi_{b}_", f"mpi_{b}", f"mpi_{b}__", f"MPI_{up}") if s in defined]
        if f"ompi_{b}_f" in undef and f"ompi_{b}_f" in defined:
            s.append(f"ompi_{b}_f")
        if name in undef:
            calls_c.append(name)  # the C wrapper records it
            s = []
        if not fwd[name]:
            s = []
        syms[name] = s
        # the mpi_f08 entry, wrapped when it reaches no other wrapper: it calls the pmpi_
        # Fortran entry (Open MPI) or the C PMPI_ function (MPICH's mpi_f08 for its calls
        # without a buffer), not an ompi_name_f wrapped above
        fwd8[name] = next((s for s in (f"pmpi_{b}_f08_", f"pmpir_{b}_f08_", f"pmpi_{b}_f08ts_",
                                       f"pmpir_{b}_f08ts_") if s in defined), "")
        e8 = [s for s in (f"mpi_{b}_f08_", f"mpi_{b}_f08ts_") if s in defined]
        direct = f"pmpi_{b}_" in undef or f"P{name}" in undef
        syms8[name] = e8 if fwd8[name] and direct and f"ompi_{b}_f" not in s else []
    return fwd, fwd8, syms, syms8, calls_c


# where IERROR is among a Fortran entry's arguments when not after the C prototype's
IERROR_AT = {"init": 0, "init_thread": 2}


def generate(fc, funcs, names, split_params, fcalls, out):
    defined, undef = set(), set()
    for lib in _libraries(fc):
        d = _symbols(lib, "--defined-only")
        if not d & {"mpi_init_", "mpi_init", "mpi_init__", "MPI_INIT"} and \
                not any(s.endswith("_f08_") for s in d):
            continue  # not a Fortran library (libmpi, libopen-pal, ...)
        defined |= d
        undef |= _symbols(lib, "--undefined-only")
    # FWRAP(name) and the macros that define one at the top level: BLOCKING_SEND(send)
    hand = set(re.findall(r"^[A-Z_]+\(([a-z_0-9]+)[,)]", open(fcalls).read(), re.M))
    fwd, fwd8, syms, syms8, calls_c = decide(names, defined, undef)
    wrapped = [n for n in names if syms[n]]
    wrapped8 = [n for n in names if syms8[n]]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "trace_fnames.h"), "w") as f:
        f.write("/* generated by src/trace/gen_fortran.py from this MPI's Fortran libraries */\n"
                "#ifndef HCLOCK_TRACE_FNAMES_H\n#define HCLOCK_TRACE_FNAMES_H\n\n"
                "enum fortran_fwd {\n")
        for n in names:
            f.write(f"\tFP_{n[4:].lower()},\n\tFP_{n[4:].lower()}_f08,\n")
        f.write("\tFP_COUNT\n};\n\nextern const char *const fortran_fwd_names[FP_COUNT];\n\n")
        for n in names:
            b = n[4:].lower()
            f.write(f"#define FTF_{b} TF_{n}\n#define FNAMES_{b}(F, f)"
                    + "".join(f" F(f, {s})" for s in syms[n]) + "\n")
        f.write("\n#endif\n")
    generic = []
    for n in wrapped8:
        ps = [p for p in split_params(funcs[n]) if p not in ("...", "void")]
        nw = len(ps) + 1 + sum("char" in p for p in ps) + SLACK
        b = n[4:].lower()
        a = [f"a{i}" for i in range(nw)]
        sig = f"void f8_{b}({', '.join(f'W a{i}' for i in range(nw))})\n{{\n"
        if b in hand:
            ie = IERROR_AT.get(b, len(ps))  # IERROR: after the C prototype's parameters
            a[ie] = f"a{ie} ? a{ie} : (W)&e"
            body = (f"\tvoid f8w_{b}();\n\tMPI_Fint e = MPI_SUCCESS;\n"
                    f"\tf8w_{b}({', '.join(a)});\n")
        else:
            body = (f"\tstruct trace_call c;\n\tint on = trace_enter(TF_{n}, &c);\n"
                    f"\tFWD({b}_f08)({', '.join(a)});\n\tif (on)\n\t\ttrace_leave(&c);\n")
        generic.append(sig + body + "}\n" + "".join(f"FALIAS(f8_{b}, {s})\n" for s in syms8[n]))
    for n in wrapped:
        if n[4:].lower() in hand:
            continue
        ps = [p for p in split_params(funcs[n]) if p not in ("...", "void")]
        nw = len(ps) + 1 + sum("char" in p for p in ps) + SLACK
        b = n[4:].lower()
        a = ", ".join(f"a{i}" for i in range(nw))
        generic.append(f"void fw_{b}({', '.join(f'W a{i}' for i in range(nw))})\n{{\n"
                       f"\tstruct trace_call c;\n\tint on = trace_enter(TF_{n}, &c);\n"
                       f"\tFWD({b})({a});\n\tif (on)\n\t\ttrace_leave(&c);\n}}\n"
                       f"FNAMES_{b}(FALIAS, fw_{b})\n")
    with open(os.path.join(out, "trace_fwrappers.c"), "w") as f:
        f.write("/* generated by src/trace/gen_fortran.py: enter/leave around every Fortran entry\n"
                " * point fcalls.c does not wrap by hand, and the mpi_f08 entries that reach no\n"
                " * other wrapper (f8_name).\n * Left to the C wrappers (the Fortran library "
                "calls the C MPI_ function): " + (", ".join(calls_c) or "none") +
                ".\n * mpi_f08 entries wrapped on their own: " +
                (", ".join(wrapped8) or "none") + ".\n */\n")
        f.write('#include "trace/fortran.h"\n\n'
                "const char *const fortran_fwd_names[FP_COUNT] = {\n")
        for n in names:
            f.write(f'\t"{fwd[n]}",\n\t"{fwd8[n]}",\n')
        f.write("};\n\n" + "\n".join(generic))
    print(f"gen_fortran: {len(wrapped)} functions wrapped in Fortran, "
          f"{len([n for n in wrapped if n[4:].lower() in hand])} of them by hand; "
          f"{len(calls_c)} left to the C wrappers; {len(wrapped8)} mpi_f08 entries wrapped on "
          f"their own, {len([n for n in wrapped8 if n[4:].lower() in hand])} of them by hand")
