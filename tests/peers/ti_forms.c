/* The argument forms `smpirun -trace-ti` (SimGrid 3.32) writes for what real MPI programs do,
   one per section (argv[1]), for tests/traces/test_ti_forms.py: traced under SMPI, then replayed
   by SMPI's replay and by commaware, and compared with SMPI's own run of the program.

   Compute is smpi_execute_flops only (the runs have smpi/simulate-computation:no), so that the
   run is deterministic and its trace's compute lines are exactly these flops. Each rank prints
   `COMMAWARE_RANK_END RANK TIME` (MPI_Wtime, 17 digits) before MPI_Finalize. Sizes cross the
   64 KiB eager threshold. Sections:
     derived    MPI_Type_vector, MPI_Type_contiguous and MPI_Type_create_struct, all of 1600
                bytes, in point-to-point calls and collectives (datatype -1 in the trace)
     inplace    MPI_IN_PLACE in every collective that takes it
     zero       zero-count messages and collectives
     gather_recv0  MPI_Gather and MPI_Scatter with the count MPI ignores set to 0
     anysource  MPI_ANY_SOURCE in recv, irecv (+ wait and test) and sendrecv; MPI_ANY_TAG
     anytag     MPI_ANY_TAG alone (specific sources)
     procnull   send, isend, irecv and recv with MPI_PROC_NULL (+ wait and test)
     sendrecv_procnull  MPI_Sendrecv with an MPI_PROC_NULL side (what smpirun does not write)
     comms      collectives and point-to-point on MPI_Comm_split and MPI_Comm_dup communicators
     icoll      non-blocking collectives (MPI_Ibcast, MPI_Iallreduce, MPI_Ibarrier)
     ssend      MPI_Ssend and MPI_Issend
     waitany    MPI_Waitany */
#include <mpi.h>
#include <smpi/smpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int r, p;

static void work(double flops) { smpi_execute_flops(flops); }

/* A blocking send of count elements to `to` and a receive from `from`, even ranks sending first. */
static void send_recv(double* a, double* b, int count, MPI_Datatype type, int to, int from, int tag) {
  if (r % 2 == 0) {
    MPI_Send(a, count, type, to, tag, MPI_COMM_WORLD);
    MPI_Recv(b, count, type, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(b, count, type, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(a, count, type, to, tag, MPI_COMM_WORLD);
  }
}

static void derived(double* a, double* b) {
  int right = (r + 1) % p, left = (r + p - 1) % p;
  MPI_Datatype vec, cont, st;
  MPI_Type_vector(100, 2, 4, MPI_DOUBLE, &vec); /* 200 doubles out of 400: 1600 bytes */
  MPI_Type_commit(&vec);
  MPI_Type_contiguous(200, MPI_DOUBLE, &cont); /* 1600 bytes */
  MPI_Type_commit(&cont);
  int lens[2] = {100, 150};                    /* 100 ints and 150 doubles: 1600 bytes */
  MPI_Aint disps[2] = {0, 512};
  MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
  MPI_Type_create_struct(2, lens, disps, types, &st);
  MPI_Type_commit(&st);
  MPI_Request q[4];
  work(1e6 * (r + 1));
  /* 60 vectors: 96000 bytes, a rendezvous message */
  MPI_Irecv(b, 60, vec, left, 1, MPI_COMM_WORLD, &q[0]);
  MPI_Isend(a, 60, vec, right, 1, MPI_COMM_WORLD, &q[1]);
  MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
  work(5e5 * (p - r));
  send_recv(a, b, 5, cont, right, left, 2);
  MPI_Sendrecv(a, 3, st, right, 3, b, 3, st, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  work(2e5 * (r + 2));
  MPI_Bcast(a, 50, vec, 1, MPI_COMM_WORLD);
  MPI_Gather(a, 2, cont, b, 2, cont, 0, MPI_COMM_WORLD);
  MPI_Alltoall(a, 4, st, b, 4, st, MPI_COMM_WORLD);
  MPI_Allgather(a, 1, vec, b, 1, vec, MPI_COMM_WORLD);
  work(3e5);
  MPI_Type_free(&vec);
  MPI_Type_free(&cont);
  MPI_Type_free(&st);
}

static void inplace(double* a, double* b) {
  int counts[64], displs[64];
  work(4e5 * (r + 1));
  MPI_Allreduce(MPI_IN_PLACE, a, 9000, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (r == 0)
    MPI_Reduce(MPI_IN_PLACE, a, 5000, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  else
    MPI_Reduce(a, NULL, 5000, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  work(3e5 * (p - r));
  MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, 1000, MPI_DOUBLE, MPI_COMM_WORLD);
  if (r == 1)
    MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, 3000, MPI_DOUBLE, 1, MPI_COMM_WORLD);
  else
    MPI_Gather(a, 3000, MPI_DOUBLE, b, 3000, MPI_DOUBLE, 1, MPI_COMM_WORLD);
  if (r == 2 % p)
    MPI_Scatter(a, 2500, MPI_DOUBLE, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, 2 % p, MPI_COMM_WORLD);
  else
    MPI_Scatter(NULL, 0, MPI_DOUBLE, b, 2500, MPI_DOUBLE, 2 % p, MPI_COMM_WORLD);
  work(2e5 * (r + 1));
  MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, 700, MPI_DOUBLE, MPI_COMM_WORLD);
  /* in-place alltoallv needs symmetric counts: rank r and rank i exchange 300 (r + i + 1) */
  for (int i = 0; i < p; i++) {
    counts[i] = 300 * (r + i + 1);
    displs[i] = 3000 * i;
  }
  MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, a, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
  for (int i = 0; i < p; i++) counts[i] = 1000 * (i + 1);
  MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
  MPI_Reduce_scatter(MPI_IN_PLACE, a, counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Scan(MPI_IN_PLACE, a, 4000, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  work(1e5 * (p - r));
}

static void zero(double* a, double* b) {
  int right = (r + 1) % p, left = (r + p - 1) % p;
  int counts[64], displs[64];
  MPI_Request q[2];
  work(3e5 * (r + 1));
  MPI_Sendrecv(a, 0, MPI_DOUBLE, right, 1, b, 0, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Irecv(b, 0, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &q[0]);
  MPI_Isend(a, 0, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &q[1]);
  MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
  send_recv(a, b, 0, MPI_INT, right, left, 3);
  work(2e5 * (p - r));
  MPI_Bcast(a, 0, MPI_DOUBLE, 1, MPI_COMM_WORLD);
  MPI_Allreduce(a, b, 0, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Alltoall(a, 0, MPI_DOUBLE, b, 0, MPI_DOUBLE, MPI_COMM_WORLD);
  /* alltoallv and gatherv with some zero counts */
  for (int i = 0; i < p; i++) { /* rank r sends counts[i] to rank i, which expects as much */
    counts[i] = (r + i) % 2 ? 0 : 1000 * (r + i + 1);
    displs[i] = 10000 * i;
  }
  MPI_Alltoallv(a, counts, displs, MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
  for (int i = 0; i < p; i++) counts[i] = i % 2 ? 0 : 1500;
  MPI_Gatherv(a, counts[r], MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  work(1e5 * (r + 3));
}

static void gather_recv0(double* a, double* b) {
  /* the other ranks pass a receive count of 0, which only the root's matters */
  work(2e5 * (r + 1));
  MPI_Gather(a, 3000, MPI_DOUBLE, b, r == 1 ? 3000 : 0, MPI_DOUBLE, 1, MPI_COMM_WORLD);
  work(1e5 * (p - r));
  MPI_Scatter(a, r == 2 % p ? 2500 : 0, MPI_DOUBLE, b, 2500, MPI_DOUBLE, 2 % p, MPI_COMM_WORLD);
  work(1e5);
}

static void anysource(double* a, double* b) {
  MPI_Request q[2];
  int flag = 0;
  work(2e5 * (p - r));
  /* rank 0 collects one message from every other rank, of different sizes, eager and not */
  if (r == 0) {
    for (int i = 1; i < p; i++) MPI_Recv(b, 100000, MPI_DOUBLE, MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Send(a, 5000 * r, MPI_DOUBLE, 0, 6, MPI_COMM_WORLD);
  }
  work(1e5 * (r + 1));
  /* an any-source irecv, tested then waited */
  if (r == 0) {
    MPI_Irecv(b, 1000, MPI_DOUBLE, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &q[0]);
    work(5e5);
    MPI_Test(&q[0], &flag, MPI_STATUS_IGNORE);
    if (!flag) MPI_Wait(&q[0], MPI_STATUS_IGNORE);
  } else if (r == p - 1) {
    MPI_Send(a, 1000, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD);
  }
  /* sendrecv around the ring, received from any source */
  MPI_Sendrecv(a, 3000, MPI_DOUBLE, (r + 1) % p, 0, b, 3000, MPI_DOUBLE, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  /* any source and any tag */
  if (r == 1) {
    MPI_Irecv(b, 20000, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &q[0]);
    MPI_Wait(&q[0], MPI_STATUS_IGNORE);
  } else if (r == 2) {
    MPI_Send(a, 20000, MPI_DOUBLE, 1, 9, MPI_COMM_WORLD);
  }
  work(2e5);
}

static void anytag(double* a, double* b) {
  MPI_Request q[2];
  work(2e5 * (r + 1));
  if (r == 0) {
    MPI_Recv(b, 1000, MPI_DOUBLE, 1, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Irecv(b, 30000, MPI_DOUBLE, 2, MPI_ANY_TAG, MPI_COMM_WORLD, &q[0]);
    work(3e5);
    MPI_Wait(&q[0], MPI_STATUS_IGNORE);
  } else if (r == 1) {
    MPI_Send(a, 1000, MPI_DOUBLE, 0, 12, MPI_COMM_WORLD);
  } else if (r == 2) {
    MPI_Send(a, 30000, MPI_DOUBLE, 0, 13, MPI_COMM_WORLD);
  }
  work(1e5 * (p - r));
}

static void procnull(double* a, double* b) {
  /* a line 0 - 1 - ... - p-1 without wrap-around: the ends' outer neighbours are MPI_PROC_NULL */
  int up = r == p - 1 ? MPI_PROC_NULL : r + 1, down = r == 0 ? MPI_PROC_NULL : r - 1;
  MPI_Request q[4];
  int flag = 0;
  work(3e5 * (r + 1));
  MPI_Irecv(b, 9000, MPI_DOUBLE, down, 1, MPI_COMM_WORLD, &q[0]);
  MPI_Irecv(b + 10000, 9000, MPI_DOUBLE, up, 2, MPI_COMM_WORLD, &q[1]);
  MPI_Isend(a, 9000, MPI_DOUBLE, up, 1, MPI_COMM_WORLD, &q[2]);
  MPI_Isend(a + 10000, 9000, MPI_DOUBLE, down, 2, MPI_COMM_WORLD, &q[3]);
  MPI_Waitall(4, q, MPI_STATUSES_IGNORE);
  work(2e5 * (p - r));
  MPI_Irecv(b, 100, MPI_DOUBLE, down, 3, MPI_COMM_WORLD, &q[0]);
  MPI_Isend(a, 100, MPI_DOUBLE, up, 3, MPI_COMM_WORLD, &q[1]);
  MPI_Test(&q[0], &flag, MPI_STATUS_IGNORE);
  if (!flag) MPI_Wait(&q[0], MPI_STATUS_IGNORE);
  MPI_Wait(&q[1], MPI_STATUS_IGNORE);
  send_recv(a, b, 2000, MPI_DOUBLE, up, down, 4);
  work(1e5 * (r + 2));
}

static void sendrecv_procnull(double* a, double* b) {
  int up = r == p - 1 ? MPI_PROC_NULL : r + 1, down = r == 0 ? MPI_PROC_NULL : r - 1;
  work(1e5 * (r + 1));
  MPI_Sendrecv(a, 4000, MPI_DOUBLE, up, 5, b, 4000, MPI_DOUBLE, down, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  work(1e5);
}

static void comms(double* a, double* b) {
  MPI_Comm half, dup;
  work(2e5 * (r + 1));
  /* two halves, ranks numbered backwards in each: every rank makes the same calls */
  MPI_Comm_split(MPI_COMM_WORLD, r % 2, p - r, &half);
  int hr, hp;
  MPI_Comm_rank(half, &hr);
  MPI_Comm_size(half, &hp);
  MPI_Bcast(a, 12000, MPI_DOUBLE, 1 % hp, half);
  work(1e5 * (p - r));
  MPI_Allreduce(a, b, 3000, MPI_DOUBLE, MPI_SUM, half);
  MPI_Sendrecv(a, 7000, MPI_DOUBLE, (hr + 1) % hp, 4, b, 7000, MPI_DOUBLE, (hr + hp - 1) % hp, 4, half,
               MPI_STATUS_IGNORE);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Barrier(dup);
  MPI_Reduce(a, b, 2000, MPI_DOUBLE, MPI_SUM, 0, dup);
  work(1e5);
  MPI_Comm_free(&half);
  MPI_Comm_free(&dup);
}

static void icoll(double* a, double* b) {
  MPI_Request q;
  work(1e5 * (r + 1));
  MPI_Ibcast(a, 1000, MPI_DOUBLE, 0, MPI_COMM_WORLD, &q);
  work(1e5);
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  MPI_Iallreduce(a, b, 1000, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q);
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  MPI_Ibarrier(MPI_COMM_WORLD, &q);
  MPI_Wait(&q, MPI_STATUS_IGNORE);
}

static void ssend(double* a, double* b) {
  int right = (r + 1) % p, left = (r + p - 1) % p;
  MPI_Request q[2];
  work(2e5 * (r + 1));
  /* small messages: MPI_Send would be eager, MPI_Ssend waits for the receive */
  MPI_Irecv(b, 100, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &q[0]);
  work(3e5 * (p - r));
  MPI_Ssend(a, 100, MPI_DOUBLE, right, 1, MPI_COMM_WORLD);
  MPI_Wait(&q[0], MPI_STATUS_IGNORE);
  MPI_Irecv(b, 200, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &q[0]);
  MPI_Issend(a, 200, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &q[1]);
  work(1e5 * (r + 1));
  MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
}

static void waitany(double* a, double* b) {
  MPI_Request q[2];
  int idx;
  MPI_Irecv(b, 100, MPI_DOUBLE, (r + p - 1) % p, 1, MPI_COMM_WORLD, &q[0]);
  MPI_Isend(a, 100, MPI_DOUBLE, (r + 1) % p, 1, MPI_COMM_WORLD, &q[1]);
  MPI_Waitany(2, q, &idx, MPI_STATUS_IGNORE);
  MPI_Wait(&q[1 - idx], MPI_STATUS_IGNORE);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  double *a = calloc(1 << 19, 8), *b = calloc(1 << 19, 8);
  const char* section = argc > 1 ? argv[1] : "";
  static const struct { const char* name; void (*run)(double*, double*); } sections[] = {
      {"derived", derived},   {"inplace", inplace}, {"zero", zero},   {"gather_recv0", gather_recv0},
      {"anysource", anysource},
      {"anytag", anytag},     {"procnull", procnull}, {"sendrecv_procnull", sendrecv_procnull},
      {"comms", comms},       {"icoll", icoll},     {"ssend", ssend}, {"waitany", waitany}};
  int found = 0;
  for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
    if (!strcmp(section, sections[i].name)) {
      sections[i].run(a, b);
      found = 1;
    }
  if (!found) {
    if (r == 0) fprintf(stderr, "unknown section '%s'\n", section);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  printf("COMMAWARE_RANK_END %d %.17g\n", r, MPI_Wtime());
  fflush(stdout);
  free(a);
  free(b);
  MPI_Finalize();
  return 0;
}
