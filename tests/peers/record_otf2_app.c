/* A 4-rank MPI program for `trace record --format otf2` (tests/traces/test_record_otf2.py): compute
 * bursts of different lengths per rank, and every kind of call the OTF2 archive carries —
 * blocking, synchronous and non-blocking point-to-point with waits, a successful test and a
 * waitall, a sendrecv, the collectives with uneven v-counts, and collectives and messages on
 * communicators made by MPI_Comm_split and MPI_Comm_dup. No wildcard receives: OTF2 records the
 * sender that matched, which the JSON recording does not keep. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void spin(double s) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do clock_gettime(CLOCK_MONOTONIC, &b);
  while ((b.tv_sec - a.tv_sec) + 1e-9 * (b.tv_nsec - a.tv_nsec) < s);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int r, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  static char buf[1 << 17], out[1 << 19];
  memset(buf, 1, sizeof buf);
  spin(0.002 * (r + 1));
  MPI_Sendrecv(buf, 4000, MPI_BYTE, (r + 1) % p, 2, out, 4000, MPI_BYTE, (r + p - 1) % p, 2, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  if (r == 0) {
    MPI_Request reqs[16];
    for (int q = 1; q < p; q++) MPI_Irecv(out + 1000 * q, 100 * q, MPI_BYTE, q, 9, MPI_COMM_WORLD, &reqs[q - 1]);
    MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    MPI_Waitall(p - 2, reqs + 1, MPI_STATUSES_IGNORE);
  } else {
    MPI_Request req;
    int done = 0;
    MPI_Isend(buf, 100 * r, MPI_BYTE, 0, 9, MPI_COMM_WORLD, &req);
    spin(0.001);
    while (!done) MPI_Test(&req, &done, MPI_STATUS_IGNORE);
  }
  spin(0.001);
  if (r % 2 == 0) {
    MPI_Ssend(buf, 70000, MPI_BYTE, r + 1, 4, MPI_COMM_WORLD);
    MPI_Recv(out, 3000, MPI_BYTE, r + 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(out, 70000, MPI_BYTE, r - 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    spin(0.0005);
    MPI_Send(buf, 3000, MPI_BYTE, r - 1, 5, MPI_COMM_WORLD);
  }
  MPI_Bcast(buf, 100000, MPI_BYTE, 1, MPI_COMM_WORLD);
  MPI_Allreduce(buf, out, 64, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Reduce(buf, out, 32, MPI_DOUBLE, MPI_SUM, 2, MPI_COMM_WORLD);
  MPI_Gather(buf, 500, MPI_BYTE, out, 500, MPI_BYTE, 0, MPI_COMM_WORLD);
  MPI_Scatter(buf, 700, MPI_BYTE, out, 700, MPI_BYTE, 3, MPI_COMM_WORLD);
  MPI_Allgather(buf, 300, MPI_BYTE, out, 300, MPI_BYTE, MPI_COMM_WORLD);
  MPI_Alltoall(buf, 200, MPI_BYTE, out, 200, MPI_BYTE, MPI_COMM_WORLD);
  int counts[16], displs[16], dcounts[16];
  for (int q = 0; q < p; q++) {
    counts[q] = 800 * (q + 1);
    displs[q] = q ? displs[q - 1] + counts[q - 1] : 0;
    dcounts[q] = counts[q] / 8;
  }
  MPI_Gatherv(buf, counts[r], MPI_BYTE, out, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
  MPI_Allgatherv(buf, counts[r], MPI_BYTE, out, counts, displs, MPI_BYTE, MPI_COMM_WORLD);
  MPI_Scatterv(buf, counts, displs, MPI_BYTE, out, counts[r], MPI_BYTE, 1, MPI_COMM_WORLD);
  MPI_Reduce_scatter(buf, out, dcounts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  spin(0.0005 * r);
  MPI_Scan(buf, out, 16, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Exscan(buf, out, 16, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Comm sub, dup;
  MPI_Comm_split(MPI_COMM_WORLD, r % 2, -r, &sub);
  spin(0.001);
  MPI_Bcast(buf, 50000, MPI_BYTE, 0, sub);
  MPI_Comm_dup(sub, &dup);
  MPI_Allreduce(buf, out, 128, MPI_DOUBLE, MPI_SUM, dup);
  int me;
  MPI_Comm_rank(dup, &me);
  if (me == 0) MPI_Send(buf, 900, MPI_BYTE, 1, 6, dup);
  else MPI_Recv(out, 900, MPI_BYTE, 0, 6, dup, MPI_STATUS_IGNORE);
  MPI_Comm_free(&dup);
  MPI_Comm_free(&sub);
  MPI_Barrier(MPI_COMM_WORLD);
  spin(0.001);
  MPI_Finalize();
  return 0;
}
