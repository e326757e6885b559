#include <hwloc.h>

#include "emulate/emu.h"
#include "mpi/topo.h"
#include "util/err.h"

int topo_split_node(MPI_Comm comm, hclock_emu *emu, MPI_Comm *node)
{
	int r, rc;
	MPI_Comm_rank(comm, &r);
	if (emu && !emu->p.topology_host)
		rc = MPI_Comm_split(comm, emu->node, r, node);
	else
		rc = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, r, MPI_INFO_NULL, node);
	return rc == MPI_SUCCESS ? 0 : err_set(HCLOCK_EMPI, "splitting the communicator by node failed");
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

int topo_split_socket(MPI_Comm node, hclock_emu *emu, MPI_Comm *socket)
{
	int r, id = emu && emu->socket >= 0 && !emu->p.topology_host ? emu->socket
	                                                                : topo_socket_of_self();
	MPI_Comm_rank(node, &r);
	if (MPI_Comm_split(node, id, r, socket) != MPI_SUCCESS)
		return err_set(HCLOCK_EMPI, "splitting the node communicator by socket failed");
	return 0;
}

int topo_leaders(MPI_Comm comm, MPI_Comm sub, MPI_Comm *leaders)
{
	int r, sr;
	MPI_Comm_rank(comm, &r);
	MPI_Comm_rank(sub, &sr);
	if (MPI_Comm_split(comm, sr == 0 ? 0 : MPI_UNDEFINED, r, leaders) != MPI_SUCCESS)
		return err_set(HCLOCK_EMPI, "creating the leaders' communicator failed");
	return 0;
}
