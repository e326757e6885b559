/* topo.c - the node and socket levels of the hierarchy (topo.h). */
#include <hwloc.h>

#include "clock/clock.h"
#include "transport/comm.h"
#include "transport/topo.h"
#include "util/err.h"

int topo_split_node(MPI_Comm comm, hclock_clock *clk, MPI_Comm *node)
{
	int r, vnode, vsocket;
	PMPI_Comm_rank(comm, &r);
	if (!clock_topology(clk, &vnode, &vsocket))
		return comm_check(PMPI_Comm_split(comm, vnode, r, node), "MPI_Comm_split (by node)");
	return comm_check(PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, r, MPI_INFO_NULL, node),
	                  "MPI_Comm_split_type (by node)");
}

int topo_socket_of_self(void)
{
	hwloc_topology_t topo;
	int id = -1;
	if (hwloc_topology_init(&topo))
		return -1;
	if (hwloc_topology_load(topo)) {
		hwloc_topology_destroy(topo);
		return -1;
	}
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	if (set && !hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS)) {
		hwloc_obj_t pkg = hwloc_get_next_obj_covering_cpuset_by_type(topo, set,
		                                                             HWLOC_OBJ_PACKAGE, NULL);
		/* bound to several packages, or unbound: take where the process runs now */
		if (!pkg && !hwloc_get_last_cpu_location(topo, set, HWLOC_CPUBIND_PROCESS))
			pkg = hwloc_get_next_obj_covering_cpuset_by_type(topo, set, HWLOC_OBJ_PACKAGE, NULL);
		if (pkg)
			id = (int)pkg->logical_index;
	}
	hwloc_bitmap_free(set);
	hwloc_topology_destroy(topo);
	return id < 0 ? 0 : id; /* machines without package objects have one socket */
}

int topo_split_socket(MPI_Comm node, hclock_clock *clk, MPI_Comm *socket)
{
	int r, vnode, vsocket;
	int id = !clock_topology(clk, &vnode, &vsocket) && vsocket >= 0 ? vsocket
	                                                                 : topo_socket_of_self();
	PMPI_Comm_rank(node, &r);
	return comm_check(PMPI_Comm_split(node, id, r, socket), "MPI_Comm_split (by socket)");
}

int topo_leaders(MPI_Comm comm, MPI_Comm sub, MPI_Comm *leaders)
{
	int r, sr;
	PMPI_Comm_rank(comm, &r);
	PMPI_Comm_rank(sub, &sr);
	return comm_check(PMPI_Comm_split(comm, sr == 0 ? 0 : MPI_UNDEFINED, r, leaders),
	                  "MPI_Comm_split (the leaders)");
}

int topo_count_nodes(MPI_Comm comm, hclock_clock *clk, int *n)
{
	MPI_Comm node;
	int r = 1, rc = topo_split_node(comm, clk, &node);
	if (!rc) {
		PMPI_Comm_rank(node, &r);
		PMPI_Comm_free(&node);
	}
	int lead = r == 0;
	*n = 0;
	return first_err(rc, comm_check(PMPI_Allreduce(&lead, n, 1, MPI_INT, MPI_SUM, comm),
	                                "MPI_Allreduce (counting the nodes)"));
}
