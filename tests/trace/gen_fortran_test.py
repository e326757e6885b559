#!/usr/bin/env python3
"""gen_fortran_test.py SRC_TRACE_DIR - gen_fortran.decide, the rule that keeps a Fortran
call from being recorded twice or not at all, on the symbol patterns of the two libraries
(written from their `nm -D` output: Open MPI 4.1's libmpi_mpifh and libmpi_usempif08, MPICH
4.0's libmpichfort), whatever MPI this build uses:
  - Open MPI: mpif.h entries call PMPI_ (wrapped under all four manglings and ompi_name_f);
    mpi_f08's call ompi_name_f (no mpi_f08 wrapper: that one records it) or, for MPI_Test,
    the pmpi_ Fortran entry (its mpi_f08 entry wrapped);
  - MPICH: mpif.h entries call MPI_ (left to the C wrappers); mpi_f08's MPI_Send (a buffer)
    calls MPI_Send (left), its MPI_Wait calls PMPI_Wait (mpi_f08 entry wrapped);
  - a function whose PMPI entry is missing is not wrapped.
Each case also checks the rule the other way round, on purpose wrong inputs (it bites: the
MPICH pattern with MPI_Send not referenced gets a wrapper). Exits 1 if a check failed."""
import sys

import tracecheck
from tracecheck import check

sys.path.insert(0, sys.argv[1])
import gen_fortran  # noqa: E402


def manglings(b):
    return {f"mpi_{b}_", f"mpi_{b}", f"mpi_{b}__", f"MPI_{b.upper()}", f"pmpi_{b}_",
            f"pmpi_{b}", f"pmpi_{b}__", f"PMPI_{b.upper()}"}


names = ["MPI_Send", "MPI_Test", "MPI_Wait", "MPI_Comm_rank"]
# Open MPI 4.1: libmpi_mpifh defines every mangling and ompi_name_f, calls PMPI_; the mpi_f08
# library defines mpi_name_f08_/pmpi_name_f08_ and calls ompi_name_f, or pmpi_test_
ompi_def = set().union(*(manglings(n[4:].lower()) | {f"ompi_{n[4:].lower()}_f",
                                                      f"mpi_{n[4:].lower()}_f08_",
                                                      f"pmpi_{n[4:].lower()}_f08_"}
                         for n in names))
ompi_undef = {"PMPI_Send", "PMPI_Test", "PMPI_Wait", "PMPI_Comm_rank", "ompi_send_f",
              "ompi_wait_f", "ompi_comm_rank_f", "pmpi_test_"}
fwd, fwd8, syms, syms8, calls_c = gen_fortran.decide(names, ompi_def, ompi_undef)
check(set(syms["MPI_Send"]) == {"mpi_send_", "mpi_send", "mpi_send__", "MPI_SEND",
                                "ompi_send_f"} and fwd["MPI_Send"] == "pmpi_send_",
      f"Open MPI: MPI_Send wrapped as {syms['MPI_Send']}, forwarded to {fwd['MPI_Send']}")
check(not syms8["MPI_Send"] and not syms8["MPI_Wait"],
      f"Open MPI: mpi_send_f08_, mpi_wait_f08_ not wrapped (ompi_name_f records them): "
      f"{syms8['MPI_Send']}, {syms8['MPI_Wait']}")
check(syms8["MPI_Test"] == ["mpi_test_f08_"] and fwd8["MPI_Test"] == "pmpi_test_f08_" and
      "ompi_test_f" not in syms["MPI_Test"],
      f"Open MPI: mpi_test_f08_ (calls pmpi_test_) wrapped on its own: {syms8['MPI_Test']}, "
      f"forwarded to {fwd8['MPI_Test']}")
check(not calls_c, f"Open MPI: nothing left to the C wrappers ({calls_c})")
# the same without pmpi_comm_rank_ and its kin: no PMPI entry, no wrapper
d = ompi_def - {"pmpi_comm_rank_", "pmpi_comm_rank", "pmpi_comm_rank__", "PMPI_COMM_RANK"}
check(not gen_fortran.decide(names, d, ompi_undef)[2]["MPI_Comm_rank"],
      "a function without its PMPI Fortran entry is not wrapped")

# MPICH 4.0: libmpichfort defines the manglings (no ompi_), mpi_name_f08(ts)_ and
# pmpir_name_f08(ts)_; mpif.h calls MPI_; mpi_f08's Send calls MPI_Send, its Wait, Test and
# Comm_rank PMPI_
mpich_def = set().union(*(manglings(n[4:].lower()) for n in names)) | {
    "mpi_send_f08ts_", "pmpir_send_f08ts_", "mpi_wait_f08_", "pmpir_wait_f08_",
    "mpi_test_f08_", "pmpir_test_f08_", "mpi_comm_rank_f08_", "pmpir_comm_rank_f08_"}
mpich_undef = {"MPI_Send", "MPI_Test", "MPI_Wait", "MPI_Comm_rank", "PMPI_Wait", "PMPI_Test",
               "PMPI_Comm_rank"}
fwd, fwd8, syms, syms8, calls_c = gen_fortran.decide(names, mpich_def, mpich_undef)
check(not any(syms.values()) and sorted(calls_c) == sorted(names),
      f"MPICH: no mpif.h entry wrapped (they call the C MPI_ functions): {syms}, left to C "
      f"{calls_c}")
check(not syms8["MPI_Send"], f"MPICH: mpi_send_f08ts_ (calls MPI_Send) not wrapped: "
      f"{syms8['MPI_Send']}")
check(syms8["MPI_Wait"] == ["mpi_wait_f08_"] and fwd8["MPI_Wait"] == "pmpir_wait_f08_",
      f"MPICH: mpi_wait_f08_ (calls PMPI_Wait) wrapped: {syms8['MPI_Wait']}, forwarded to "
      f"{fwd8['MPI_Wait']}")
# it bites: were MPI_Send not called by the Fortran library, its entries would be wrapped
s = gen_fortran.decide(names, mpich_def, mpich_undef - {"MPI_Send"})[2]
check(s["MPI_Send"] == ["mpi_send_", "mpi_send", "mpi_send__", "MPI_SEND"],
      f"the rule bites: MPICH's pattern without U MPI_Send wraps mpi_send_ ({s['MPI_Send']})")
sys.exit(1 if tracecheck.failed else 0)
