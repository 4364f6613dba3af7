/* A small MPI program of our own for the SMPI agreement test (tests/engine/test_smpi_replay.py):
   traced by `smpirun -trace-ti`, then replayed by SMPI and by commaware (`--format ti`).
   Point-to-point in every form, the collectives whose algorithms both simulators share, and
   compute phases between them. Sizes cross the 64 KiB eager threshold. No sub-communicator:
   SimGrid's TI replay runs every collective on the world communicator. */
#include <mpi.h>
#include <stdlib.h>

static double work(double* x, int n, int reps) {
  double s = 0;
  for (int k = 0; k < reps; k++)
    for (int i = 0; i < n; i++) s += x[i] * (k + 1);
  return s;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int r, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  double *a = calloc(1 << 17, 8), *b = calloc(1 << 19, 8);
  int counts[64], disps[64], sc[64], rc[64];
  for (int i = 0; i < p; i++) {
    counts[i] = 1000 * (i + 1);
    disps[i] = i * 20000;
    sc[i] = 500 * (r + 1) + 7 * i;
    rc[i] = 500 * (i + 1) + 7 * r;
  }
  int right = (r + 1) % p, left = (r + p - 1) % p;
  double acc = work(a, 1000 * (r + 1), 20);

  /* point to point: eager and rendezvous, blocking and not, test, waitall, sendrecv */
  MPI_Request q[4];
  MPI_Irecv(b, 20000, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &q[0]);
  MPI_Isend(a, 20000, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &q[1]);
  MPI_Irecv(b + 20000, 100, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &q[2]);
  MPI_Isend(a, 100, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &q[3]);
  MPI_Waitall(4, q, MPI_STATUSES_IGNORE);
  acc += work(a, 2000, 10 + r);
  if (r % 2 == 0) {
    MPI_Send(a, 3000, MPI_DOUBLE, right, 3, MPI_COMM_WORLD);
    MPI_Recv(b, 3000, MPI_DOUBLE, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(b, 3000, MPI_DOUBLE, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(a, 3000, MPI_DOUBLE, right, 3, MPI_COMM_WORLD);
  }
  MPI_Sendrecv(a, 9000, MPI_DOUBLE, right, 4, b, 9000, MPI_DOUBLE, left, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  int flag = 0;
  MPI_Irecv(b, 50, MPI_DOUBLE, left, 5, MPI_COMM_WORLD, &q[0]);
  MPI_Send(a, 50, MPI_DOUBLE, right, 5, MPI_COMM_WORLD);
  MPI_Test(&q[0], &flag, MPI_STATUS_IGNORE);
  if (!flag) MPI_Wait(&q[0], MPI_STATUS_IGNORE);

  /* collectives */
  MPI_Bcast(a, 12000, MPI_DOUBLE, 1, MPI_COMM_WORLD);
  acc += work(a, 3000, 5);
  MPI_Reduce(a, b, 8000, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Allreduce(a, b, 6000, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Gather(a, 700, MPI_DOUBLE, b, 700, MPI_DOUBLE, 2 % p, MPI_COMM_WORLD);
  MPI_Gatherv(a, counts[r], MPI_DOUBLE, b, counts, disps, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Scatter(a, 900, MPI_DOUBLE, b, 900, MPI_DOUBLE, 1, MPI_COMM_WORLD);
  MPI_Scatterv(a, counts, disps, MPI_DOUBLE, b, counts[r], MPI_DOUBLE, p - 1, MPI_COMM_WORLD);
  acc += work(a, 1500, 8 + 2 * r);
  MPI_Allgather(a, 1100, MPI_DOUBLE, b, 1100, MPI_DOUBLE, MPI_COMM_WORLD);
  MPI_Allgatherv(a, counts[r], MPI_DOUBLE, b, counts, disps, MPI_DOUBLE, MPI_COMM_WORLD);
  MPI_Alltoall(a, 600, MPI_DOUBLE, b, 600, MPI_DOUBLE, MPI_COMM_WORLD);
  MPI_Alltoallv(a, sc, disps, MPI_DOUBLE, b, rc, disps, MPI_DOUBLE, MPI_COMM_WORLD);
  MPI_Reduce_scatter(a, b, counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Scan(a, b, 5000, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  acc += work(a, 500, 4 + r);
  MPI_Exscan(a, b, 12000, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  acc += work(a, 1000, 3);

  if (acc < 0) a[0] = acc; /* keep the work */
  free(a);
  free(b);
  MPI_Finalize();
  return 0;
}
