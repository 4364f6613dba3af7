/* One collective at several sizes, run by SMPI itself (smpirun, not its replay), for the
   collective algorithms whose SMPI 3.32 replay cannot be the reference
   (tests/engine/test_smpi_coll_online.py):

     coll_online allgatherv even|uneven SIZE...   MPI_Allgatherv with contiguous displacements
     coll_online gather ROOT SIZE...               MPI_Gather to ROOT
     coll_online bcast ROOT SIZE...                MPI_Bcast from ROOT
     coll_online bcast2 ROOT SIZE...               MPI_Bcast from ROOT on MPI_COMM_WORLD, then on a
                                                   duplicate of it (made before the first), per size

   Counts are of MPI_BYTE. For allgatherv, rank j's block is SIZE bytes (even) or SIZE · (1 + j mod 3)
   (uneven). Each rank first computes 0.3 ms times its rank, and after each collective 0.1 ms
   times (p − rank), as smpi_execute_flops at the host speed of 1e9 flop/s the test gives
   smpirun, so the run is deterministic (smpi/simulate-computation:no). Each rank prints
   `COMMAWARE_RANK_END RANK TIME` (MPI_Wtime, 17 digits) before MPI_Finalize. */
#include <mpi.h>
#include <smpi/smpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int r, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  if (argc < 4) {
    fprintf(stderr, "usage: coll_online allgatherv even|uneven SIZE... | gather|bcast|bcast2 ROOT SIZE...\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  long max = 0;
  for (int i = 3; i < argc; i++)
    if (atol(argv[i]) > max) max = atol(argv[i]);
  char* a = calloc((size_t)max * 3 + 1, 1);
  char* b = calloc((size_t)max * 3 * p + 1, 1);
  int* counts = malloc(sizeof(int) * p);
  int* displs = malloc(sizeof(int) * p);
  MPI_Comm dup = MPI_COMM_NULL;
  if (strcmp(argv[1], "bcast2") == 0)
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  smpi_execute_flops(0.0003e9 * r);
  for (int i = 3; i < argc; i++) {
    int size = atoi(argv[i]);
    if (strcmp(argv[1], "allgatherv") == 0) {
      int uneven = strcmp(argv[2], "uneven") == 0;
      for (int j = 0, at = 0; j < p; j++) {
        counts[j] = uneven ? size * (1 + j % 3) : size;
        displs[j] = at;
        at += counts[j];
      }
      MPI_Allgatherv(a, counts[r], MPI_BYTE, b, counts, displs, MPI_BYTE, MPI_COMM_WORLD);
    } else if (strncmp(argv[1], "bcast", 5) == 0) {
      MPI_Bcast(b, size, MPI_BYTE, atoi(argv[2]), MPI_COMM_WORLD);
      if (dup != MPI_COMM_NULL)
        MPI_Bcast(b, size, MPI_BYTE, atoi(argv[2]), dup);
    } else {
      MPI_Gather(a, size, MPI_BYTE, b, size, MPI_BYTE, atoi(argv[2]), MPI_COMM_WORLD);
    }
    smpi_execute_flops(0.0001e9 * (p - r));
  }
  printf("COMMAWARE_RANK_END %d %.17g\n", r, MPI_Wtime());
  fflush(stdout);
  free(a);
  free(b);
  free(counts);
  free(displs);
  if (dup != MPI_COMM_NULL)
    MPI_Comm_free(&dup);
  MPI_Finalize();
  return 0;
}
