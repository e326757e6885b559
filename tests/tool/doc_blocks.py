#!/usr/bin/env python3
"""doc_blocks.py - every code block a user may copy from README.md and docs/*.md works.

  doc_blocks.py --src SRC --build BUILD --mpirun MPIRUN_SH --mpiexec MPIEXEC [--cc MPICC]
                [--align 0|1]

Fenced blocks by language:
  c     the block (dedented) is text of a file in examples/ that examples/CMakeLists.txt
        builds, or else it compiles standalone with MPICC against include/ (-fsyntax-only);
  sh    every command is checked: `hclock SUB ...` (also after mpirun, an environment
        assignment or `scripts/simulate ... --`) must name a subcommand and only options of
        `hclock SUB --help`; a short one (estimated under SHORT_S seconds, see estimate())
        is also run for real on at most 2 ranks in a scratch directory, and must exit 0;
        a program of build/bin is run likewise; scripts and bench/ paths must exist;
  console  a transcript: its '$ ' lines are checked as sh commands, the rest is output;
  other (text, none) illustration or output: left alone.
With --align 0 (a build configured with -DHCLOCK_ALIGN=OFF) a sh or console block that runs
`hclock align` is left out whole (its other commands make align's inputs or read its output)
and counted in the summary line.
Commands of one block run in order in one scratch directory (a trace, then its gantt); once
one is only checked, later ones of that block are only checked too. Prints one line per
problem and exits 1 if there was any.
"""
import argparse
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

SHORT_S = 5.0
FENCE = re.compile(r"^( *)```(\S*)\s*$")
problems = []
count = {"run": 0, "checked": 0, "no_align": 0}


def blocks(path):
    """(line, lang, text) of every fenced block, dedented by its fence's indentation."""
    out, cur = [], None
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        m = FENCE.match(line.rstrip("\n"))
        if cur is None and m:
            cur = (n, m.group(2), len(m.group(1)), [])
        elif cur is not None and m:
            out.append((cur[0], cur[1], "".join(cur[3])))
            cur = None
        elif cur is not None:
            ind = cur[2]
            cur[3].append(line[ind:] if line[:ind].strip() == "" else line)
    return out


def norm(text):
    return "\n".join(l.rstrip() for l in text.strip("\n").splitlines())


def check_c(where, text, a):
    built = open(os.path.join(a.src, "examples", "CMakeLists.txt")).read()
    for f in sorted(glob.glob(os.path.join(a.src, "examples", "*.c"))):
        if os.path.basename(f) in built and norm(text) in norm(open(f).read()):
            return
    with tempfile.TemporaryDirectory() as d:
        c = os.path.join(d, "block.c")
        open(c, "w").write(text)
        r = subprocess.run([a.cc, "-fsyntax-only", "-I", os.path.join(a.src, "include"),
                            "-I", os.path.join(a.src, "src"), c],
                           capture_output=True, text=True, timeout=60)
        if r.returncode:
            first = (r.stderr.strip().splitlines() or ["?"])[0]
            problems.append(f"{where}: C block neither in a built examples/ file nor "
                            f"compiling: {first}")


def commands(text):
    """The block's commands: continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n\s*", " ", text)
    out = []
    for line in text.splitlines():
        try:
            toks = shlex.split(line, comments=True)
        except ValueError as e:
            out.append(("error", str(e)))
            continue
        for i, tok in enumerate(toks):  # the first command of a pipe or list
            if tok in ("|", "||", "&&", ";", ">", ">>", "<"):
                toks = toks[:i]
                break
        if toks:
            out.append(("cmd", toks))
    return out


def console_commands(text):
    """The commands of a console transcript: the lines after '$ ', with their continuations."""
    out, cont = [], False
    for line in text.splitlines():
        if line.startswith("$ ") or cont:
            cmd = line[2:] if line.startswith("$ ") and not cont else line
            out.append(cmd)
            cont = cmd.rstrip().endswith("\\")
    return "\n".join(out)


HELP = {}


def help_options(a, sub):
    """Options (--long and -s) in `hclock SUB --help`, or None for an unknown subcommand."""
    if sub not in HELP:
        r = subprocess.run([a.hclock, sub, "--help"], capture_output=True, text=True,
                           timeout=60, env=a.env)
        txt = r.stdout + r.stderr
        HELP[sub] = (None if r.returncode else
                     set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", txt)) | {"--help", "-h"})
    return HELP[sub]


def duration_s(v):
    m = re.fullmatch(r"([0-9.eE+-]+)(ns|us|ms|s|m|h)?", v)
    if not m:
        return 0.0
    return float(m.group(1)) * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1, "m": 60,
                                "h": 3600, None: 1}[m.group(2)]


def nsizes(v):
    n = 0
    for item in v.split(","):
        if ":" in item:
            lo, hi = (int(float(re.sub(r"[KMGT]$", "", x)) *
                          {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}.get(x[-1:], 1))
                      for x in item.split(":"))
            while lo <= hi:
                n, lo = n + 1, lo * 2
        else:
            n += 1
    return n


def estimate(sub, opts):
    """Seconds an hclock command takes, roughly (inf: unknown or long)."""
    if sub in ("specs", "align", "gantt"):
        return 0.1
    if sub == "check":
        waits = [duration_s(w) for w in opts.get("--wait", "0,10").split(",")]
        return (max(waits) + 0.5) * int(opts.get("--repeat", "1"))
    if sub == "drift":
        return duration_s(opts.get("--duration", "60"))
    if sub == "imbalance":
        return int(opts.get("--reps", "500")) * 2e-4 + 0.5
    if sub == "bench":
        n = (len(opts.get("--op", "allreduce").split(",")) *
             len(opts.get("--scheme", "roundtime").split(",")) *
             nsizes(opts.get("--sizes", "8:1M")))
        return n * duration_s(opts.get("--time-slice", "1s")) + 0.5
    if sub == "trace":
        return 3.0
    return float("inf")


def parse_hclock(where, args, a):
    """Check `SUB OPTS...`; return (sub, {opt: value}) or None."""
    if not args or args[0].startswith("-"):
        return None if args == ["--help"] else problems.append(f"{where}: hclock without a subcommand")
    sub, rest = args[0], args[1:]
    allowed = help_options(a, sub)
    if allowed is None:
        problems.append(f"{where}: 'hclock {sub}' is not a subcommand")
        return None
    opts = {}
    i = 0
    while i < len(rest):
        t = rest[i]
        if t == "--":
            break
        if t.startswith("-") and not re.fullmatch(r"-[0-9.]+", t):
            name = t.split("=", 1)[0]
            if name not in allowed:
                problems.append(f"{where}: 'hclock {sub}' has no option {name}")
            val = t.split("=", 1)[1] if "=" in t else (
                rest[i + 1] if i + 1 < len(rest) and not rest[i + 1].startswith("-") else "")
            opts[name] = val
        i += 1
    return sub, opts


def run(where, argv, np, env, cwd, a):
    count["run"] += 1
    if np:
        argv = [a.mpirun, a.mpiexec, str(np)] + argv
    try:
        r = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=90)
    except subprocess.TimeoutExpired:
        problems.append(f"{where}: timed out: {' '.join(argv)}")
        return False
    if r.returncode:
        lines = [l for l in (r.stderr + r.stdout).splitlines() if l.strip("-= \t")]
        tail = next((l for l in lines if "hclock" in l), lines[-1] if lines else "?")
        problems.append(f"{where}: exit {r.returncode}: {' '.join(argv)}: {tail}")
        return False
    return True


def launched(toks):
    """A command's (environment assignments, ranks, under MPICH, the program's argv): what
    precedes the program (VAR=value words, mpirun and its options) taken off."""
    env, np, mpich = {}, 0, False
    while toks and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", toks[0]):
        k, v = toks[0].split("=", 1)
        env[k], toks = v, toks[1:]
    if toks and os.path.basename(toks[0]) in ("mpirun", "mpiexec", "mpiexec.mpich",
                                              "mpiexec.openmpi"):
        mpich = toks[0] == "mpiexec.mpich"
        i = 1
        while i < len(toks) and toks[i].startswith("-"):
            if toks[i] in ("-np", "-n"):
                np = int(toks[i + 1])
                i += 2
            elif toks[i] in ("--mca", "-mca"):
                i += 3
            elif toks[i] in ("-bind-to", "--bind-to", "-x"):
                i += 2
            else:
                i += 1
        toks = toks[i:]
    return env, np, mpich, toks


def is_hclock(prog):
    return prog in ("hclock", "build/bin/hclock") or prog.endswith("/bin/hclock")


def needs_align(lang, text):
    """The block runs `hclock align` (with its inputs and outputs around it): a build
    configured with -DHCLOCK_ALIGN=OFF has no such subcommand, nor align's test programs."""
    if lang == "console":
        text = console_commands(text)
    for kind, toks in commands(text):
        if kind == "cmd":
            toks = launched(toks)[3]
            if toks[1:2] == ["align"] and is_hclock(toks[0]):
                return True
    return False


def check_sh(where, text, a, cwd):
    live = True
    for kind, toks in commands(text):
        count["checked"] += 1
        if kind == "error":
            problems.append(f"{where}: unparsable command: {toks}")
            continue
        assigned, np, mpich, toks = launched(toks)
        env = dict(a.env, **assigned)
        if not toks or toks[0] in ("export", "cd", "apt-get", "cmake", "sysctl", "taskset",
                                   "systemd-run", "otf2-print", "mpicc", "sh", "ctest",
                                   "mkdir"):
            if toks and toks[0] == "sh" and len(toks) > 1 and not os.path.exists(
                    os.path.join(a.src, toks[1])):
                problems.append(f"{where}: no such script {toks[1]}")
            live = live and bool(toks) and toks[0] in ("export", "cd")
            continue
        if mpich:
            live = False
        prog = toks[0] if toks else ""
        if any(x.startswith("/") for x in toks[1:]):
            live = False  # writes outside the scratch directory: options checked only
        if is_hclock(prog):
            parsed = parse_hclock(where, toks[1:], a)
            if parsed and live and np <= 2 and estimate(*parsed) <= SHORT_S:
                argv = [a.hclock] + toks[1:]
                if parsed[0] == "trace" and "--" in toks:
                    k = toks.index("--")
                    p = toks[k + 1]
                    if not p.startswith("build/bin/"):
                        live = False
                        continue
                    argv = [a.hclock] + toks[1:k + 1] + [os.path.join(a.build, p[6:])] + toks[k + 2:]
                live = run(where, argv, np, env, cwd, a) and live
            else:
                live = False
        elif prog.startswith("build/bin/"):
            exe = os.path.join(a.build, prog[6:])
            if not os.path.exists(exe):
                problems.append(f"{where}: {prog} is not built")
            elif live and np <= 2:
                live = run(where, [exe] + toks[1:], np, env, cwd, a) and live
        elif prog in ("python3",) and toks[1:2] and toks[1].startswith("tests/"):
            live = run(where, ["python3", os.path.join(a.src, toks[1])] + toks[2:], 0, env,
                       cwd, a) and live
        elif prog.startswith(("scripts/", "bench/")):
            if not os.path.exists(os.path.join(a.src, prog)):
                problems.append(f"{where}: no such file {prog}")
            if prog == "scripts/simulate" and "--" in toks:
                parse_hclock(where, toks[toks.index("--") + 1:], a)
            live = False
        else:
            problems.append(f"{where}: unknown command '{prog}' (mark the block ```text if "
                            f"it is not for copying)")
            live = False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--mpirun", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--cc", default="mpicc")
    ap.add_argument("--align", type=int, choices=(0, 1), default=1,
                    help="0: the build has no hclock align (-DHCLOCK_ALIGN=OFF)")
    a = ap.parse_args()
    a.src, a.build = os.path.abspath(a.src), os.path.abspath(a.build)
    a.mpirun = os.path.abspath(a.mpirun)
    a.hclock = os.path.join(a.build, "bin", "hclock")
    a.env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    a.env.pop("HCLOCK_EMULATE", None)
    pages = [os.path.join(a.src, "README.md")] + sorted(glob.glob(os.path.join(a.src, "docs", "*.md")))
    nblocks = 0
    for page in pages:
        rel = os.path.relpath(page, a.src)
        for line, lang, text in blocks(page):
            where = f"{rel}:{line}"
            nblocks += 1
            if lang == "c":
                check_c(where, text, a)
            elif lang in ("sh", "bash", "shell", "console"):
                if not a.align and needs_align(lang, text):
                    count["no_align"] += 1
                    continue
                if lang == "console":
                    text = console_commands(text)
                cwd = tempfile.mkdtemp(prefix="doc_blocks.")
                try:
                    check_sh(where, text, a, cwd)
                finally:
                    shutil.rmtree(cwd, ignore_errors=True)
    for p in problems:
        print("FAIL:", p)
    print(f"doc_blocks: {nblocks} blocks in {len(pages)} pages; {count['checked']} commands "
          f"checked, {count['run']} of them run; {count['no_align']} blocks left out (they run "
          f"hclock align, which this build has not); {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
