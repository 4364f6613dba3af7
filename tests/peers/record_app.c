/* A 4-rank MPI program recorded by tests/traces/test_record.py: known sizes, every kind of call the
 * replay supports (point to point, requests, waits and tests, collectives), and compute bursts.
 * Usage: record_app [EXIT_RANK EXIT_CODE [sub|derived]]: that rank exits with that code before
 * MPI_Finalize; then calls on sub-communicators, or on derived datatypes. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void spin(double seconds) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do clock_gettime(CLOCK_MONOTONIC, &b);
  while ((b.tv_sec - a.tv_sec) + 1e-9 * (b.tv_nsec - a.tv_nsec) < seconds);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int r, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  double *a = calloc(1 << 17, 8), *b = calloc(1 << 17, 8);
  int right = (r + 1) % p, left = (r + p - 1) % p;
  spin(0.002);
  /* a ring: 1000 doubles by blocking send/recv (even ranks send first) */
  if (r % 2 == 0) {
    MPI_Send(a, 1000, MPI_DOUBLE, right, 7, MPI_COMM_WORLD);
    MPI_Recv(b, 1000, MPI_DOUBLE, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(b, 1000, MPI_DOUBLE, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(a, 1000, MPI_DOUBLE, right, 7, MPI_COMM_WORLD);
  }
  /* non-blocking exchange with both neighbours: 3000 ints each way, then waitall */
  MPI_Request q[4];
  MPI_Irecv(b, 3000, MPI_INT, left, 1, MPI_COMM_WORLD, &q[0]);
  MPI_Irecv(b + 4096, 3000, MPI_INT, right, 2, MPI_COMM_WORLD, &q[1]);
  MPI_Isend(a, 3000, MPI_INT, right, 1, MPI_COMM_WORLD, &q[2]);
  MPI_Isend(a + 4096, 3000, MPI_INT, left, 2, MPI_COMM_WORLD, &q[3]);
  spin(0.001);
  MPI_Waitall(4, q, MPI_STATUSES_IGNORE);
  /* rank 0 collects one message from each other rank with MPI_ANY_SOURCE, then a waitany */
  if (r == 0) {
    for (int i = 1; i < p; i++) MPI_Recv(b, 100000, MPI_BYTE, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Send(a, 500 * r, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
  }
  MPI_Request w[2];
  MPI_Irecv(b, 64, MPI_BYTE, left, 4, MPI_COMM_WORLD, &w[0]);
  MPI_Isend(a, 64, MPI_BYTE, right, 4, MPI_COMM_WORLD, &w[1]);
  int idx, flag = 0;
  MPI_Waitany(2, w, &idx, MPI_STATUS_IGNORE);
  while (!flag) MPI_Test(&w[1 - idx], &flag, MPI_STATUS_IGNORE);
  MPI_Sendrecv(a, 2048, MPI_BYTE, right, 5, b, 2048, MPI_BYTE, left, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  spin(0.001);
  /* collectives */
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Bcast(a, 4096, MPI_DOUBLE, 1, MPI_COMM_WORLD);
  MPI_Reduce(a, b, 100, MPI_DOUBLE, MPI_SUM, 2, MPI_COMM_WORLD);
  MPI_Allreduce(a, b, 256, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Alltoall(a, 128, MPI_INT, b, 128, MPI_INT, MPI_COMM_WORLD);
  MPI_Allgather(a, 10, MPI_DOUBLE, b, 10, MPI_DOUBLE, MPI_COMM_WORLD);
  MPI_Gather(a, 5, MPI_DOUBLE, b, 5, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Scatter(a, 6, MPI_DOUBLE, b, 6, MPI_DOUBLE, 3, MPI_COMM_WORLD);
  int counts[64], displs[64];
  for (int i = 0; i < p; i++) { counts[i] = 10 * (i + 1); displs[i] = 100 * i; }
  MPI_Gatherv(a, counts[r], MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Scatterv(a, counts, displs, MPI_DOUBLE, b, counts[r], MPI_DOUBLE, 1, MPI_COMM_WORLD);
  MPI_Allgatherv(a, counts[r], MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
  int sc[64], rc[64];
  for (int i = 0; i < p; i++) { sc[i] = r + i + 1; rc[i] = i + r + 1; }
  MPI_Alltoallv(a, sc, displs, MPI_INT, b, rc, displs, MPI_INT, MPI_COMM_WORLD);
  MPI_Reduce_scatter(a, b, counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Scan(a, b, 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Exscan(a, b, 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (argc > 2 && atoi(argv[1]) == r) exit(atoi(argv[2]));
  if (argc > 3 && !strcmp(argv[3], "derived")) { /* derived datatypes: sized by MPI_Type_size */
    MPI_Datatype vec, st;
    MPI_Type_vector(100, 2, 4, MPI_DOUBLE, &vec); /* 200 of 400 doubles: 1600 bytes, extent 3184 */
    MPI_Type_commit(&vec);
    int lens[2] = {3, 5};                         /* 3 ints and 5 doubles: 52 bytes */
    MPI_Aint disps[2] = {0, 16};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Type_create_struct(2, lens, disps, types, &st);
    MPI_Type_commit(&st);
    MPI_Sendrecv(a, 3, vec, right, 8, b, 3, vec, left, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Irecv(b, 10, st, left, 9, MPI_COMM_WORLD, &q[0]);
    MPI_Isend(a, 10, st, right, 9, MPI_COMM_WORLD, &q[1]);
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    MPI_Bcast(a, 5, vec, 1, MPI_COMM_WORLD);
    MPI_Alltoall(a, 2, st, b, 2, st, MPI_COMM_WORLD);
    MPI_Gather(a, 1, vec, b, 1, vec, 0, MPI_COMM_WORLD);
    MPI_Type_free(&vec);
    MPI_Type_free(&st);
  } else if (argc > 3) { /* sub-communicators: recorded, not replayed until the core has them */
    MPI_Comm half, dup;
    MPI_Comm_split(MPI_COMM_WORLD, r == 3 ? MPI_UNDEFINED : r % 2, -r, &half);
    if (half != MPI_COMM_NULL) {
      MPI_Comm_dup(half, &dup);
      MPI_Allreduce(a, b, 3, MPI_DOUBLE, MPI_SUM, dup);
      MPI_Bcast(a, 2, MPI_DOUBLE, 0, half);
      MPI_Comm_free(&dup);
      MPI_Comm_free(&half);
    }
  }
  spin(0.002);
  MPI_Finalize();
  return 0;
}
