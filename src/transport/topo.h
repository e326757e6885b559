/*
 * topo.h - the levels of the machine for hierarchical sync (H2HCA/H3HCA, Alg. 4): processes
 * that share a node (MPI_COMM_TYPE_SHARED, or the emulation's virtual node) and a socket
 * (hwloc, from where the process is bound, or the emulation's sockets=S).
 */
#ifndef HCLOCK_TRANSPORT_TOPO_H
#define HCLOCK_TRANSPORT_TOPO_H

#include "util/pmpi.h"

#include "hclock.h"

/* Split comm into one communicator per node (rank order kept): the nodes of clk's time
 * source where it defines them (the emulation's virtual nodes), else the real ones. */
int topo_split_node(MPI_Comm comm, hclock_clock *clk, MPI_Comm *node);
/* Split a node communicator into one communicator per socket. */
int topo_split_socket(MPI_Comm node, hclock_clock *clk, MPI_Comm *socket);
/* The processes that are rank 0 of sub, as a communicator over comm (others: MPI_COMM_NULL). */
int topo_leaders(MPI_Comm comm, MPI_Comm sub, MPI_Comm *leaders);
/* The socket (package) this process is bound to, or runs on if unbound; -1 if unknown. */
int topo_socket_of_self(void);

/* Collective over comm: how many nodes its processes are on (topo_split_node's nodes: the
 * launcher's hosts, the emulation's virtual nodes) into *n on every rank. 0 or an MPI error. */
int topo_count_nodes(MPI_Comm comm, hclock_clock *clk, int *n);

#endif
