/* The program behind tests/data/ti_colls: every collective, sendrecv, test and a sub-communicator, traced with
   `smpicc -O1 ti_colls.c -o colls && smpirun -np 4 -platform P.xml -hostfile H -trace-ti --cfg=tracing/filename:ti.txt ./colls`
   (SimGrid 3.32). Counts are doubles unless the call says MPI_INT. */
#include <mpi.h>
#include <stdlib.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int r, p; MPI_Comm_rank(MPI_COMM_WORLD, &r); MPI_Comm_size(MPI_COMM_WORLD, &p);
  double *a = calloc(1<<16, 8), *b = calloc(1<<18, 8);
  int counts[64], disps[64];
  for (int i = 0; i < p; i++) { counts[i] = 10 * (i + 1); disps[i] = i * 1000; }
  MPI_Reduce(a, b, 100, MPI_DOUBLE, MPI_SUM, 1, MPI_COMM_WORLD);
  MPI_Gather(a, 50, MPI_DOUBLE, b, 50, MPI_DOUBLE, 2, MPI_COMM_WORLD);
  MPI_Gatherv(a, counts[r], MPI_DOUBLE, b, counts, disps, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Scatter(a, 30, MPI_INT, b, 30, MPI_INT, 1, MPI_COMM_WORLD);
  MPI_Scatterv(a, counts, disps, MPI_DOUBLE, b, counts[r], MPI_DOUBLE, 3, MPI_COMM_WORLD);
  MPI_Allgather(a, 20, MPI_DOUBLE, b, 20, MPI_DOUBLE, MPI_COMM_WORLD);
  MPI_Allgatherv(a, counts[r], MPI_DOUBLE, b, counts, disps, MPI_DOUBLE, MPI_COMM_WORLD);
  int sc[64], rc[64];
  for (int i = 0; i < p; i++) { sc[i] = 10 * (r + 1) + i; rc[i] = 10 * (i + 1) + r; }
  MPI_Alltoallv(a, sc, disps, MPI_DOUBLE, b, rc, disps, MPI_DOUBLE, MPI_COMM_WORLD);
  MPI_Reduce_scatter(a, b, counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Scan(a, b, 40, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Exscan(a, b, 40, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Sendrecv(a, 70, MPI_DOUBLE, (r + 1) % p, 5, b, 70, MPI_DOUBLE, (r + p - 1) % p, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Request q; int flag;
  MPI_Irecv(b, 10, MPI_DOUBLE, (r + p - 1) % p, 9, MPI_COMM_WORLD, &q);
  MPI_Send(a, 10, MPI_DOUBLE, (r + 1) % p, 9, MPI_COMM_WORLD);
  MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
  if (!flag) MPI_Wait(&q, MPI_STATUS_IGNORE);
  MPI_Comm sub; MPI_Comm_split(MPI_COMM_WORLD, r % 2, r, &sub);
  MPI_Barrier(sub);
  MPI_Comm_free(&sub);
  MPI_Finalize();
  return 0;
}
