/* A small MPI program to try `commaware trace record` on (README, docs/formats.md):
 *
 *   mpicc -O2 -o ring examples/mpi/ring.c
 *   commaware trace record -o run.json -- mpirun -np 4 ./ring
 *   commaware simulate examples/cluster16.json run.json
 *
 * Each rank computes a share of a sum (a compute burst), passes a token of 1 MiB around the ring
 * (rank 0 starts; the others receive from their left, then send to their right), and all ranks
 * combine their shares with MPI_Allreduce. Rank 0 prints the sum, which it checks. Any number of
 * ranks from 2; `ring ROUNDS` repeats the ring ROUNDS times (default 3). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define TOKEN_BYTES (1 << 20)
#define TERMS 20000000L

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int rounds = argc > 1 ? atoi(argv[1]) : 3;
  if (size < 2 || rounds < 1) {
    if (rank == 0) fprintf(stderr, "ring: needs at least 2 ranks and ROUNDS >= 1\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  char *token = calloc(TOKEN_BYTES, 1);
  int left = (rank + size - 1) % size, right = (rank + 1) % size;

  /* the compute burst: this rank's share of 1 + 2 + ... + TERMS */
  double share = 0.0;
  for (long i = rank + 1; i <= TERMS; i += size) share += (double)i;

  for (int round = 0; round < rounds; round++) {
    if (rank == 0) {
      token[0] = (char)round;
      MPI_Send(token, TOKEN_BYTES, MPI_BYTE, right, round, MPI_COMM_WORLD);
      MPI_Recv(token, TOKEN_BYTES, MPI_BYTE, left, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(token, TOKEN_BYTES, MPI_BYTE, left, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(token, TOKEN_BYTES, MPI_BYTE, right, round, MPI_COMM_WORLD);
    }
  }

  double total = 0.0;
  MPI_Allreduce(&share, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  int code = 0;
  if (rank == 0) {
    double expected = (double)TERMS * (TERMS + 1) / 2.0;
    code = total == expected ? 0 : 1;
    printf("ring: %d ranks, %d rounds of %d bytes; sum %.0f (%s)\n", size, rounds, TOKEN_BYTES, total,
           code ? "WRONG" : "right");
  }
  free(token);
  MPI_Finalize();
  return code;
}
