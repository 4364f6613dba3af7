/* commaware's MPI recorder: a PMPI interposition library (loaded with LD_PRELOAD by
 * `commaware trace record`, built on the spot with the MPI's own mpicc).
 *
 * Each rank streams its MPI calls, as commaware trace ops (docs/formats.md), into
 * $COMMAWARE_RECORD_DIR/rank-R.part: one JSON object per line, separated by commas, so that the
 * front-end merges the ranks by concatenation. The time between the end of one intercepted call
 * and the start of the next is a `compute` op in seconds (the recorder's own time excluded).
 * Calls that record nothing (a test that found its request pending, a null peer) count as
 * compute too. At MPI_Finalize the rank writes rank-R.meta (calls, overhead per call, problems);
 * at exit, rank-R.exit holds its exit status (glibc's on_exit), and MPI_Abort writes
 * rank-R.abort.
 *
 * Peers and roots are ranks within the call's communicator; each communicator the rank creates
 * with MPI_Comm_split / MPI_Comm_dup takes the rank's next local id (world = 0).
 * Requests (isend/irecv) are numbered per rank in posting order, as the trace's `req`.
 *
 * Built with -DCOMMAWARE_RECORD_CHAIN, each wrapper calls the next definition of its MPI_X in
 * the loader's search order (dlsym(RTLD_NEXT, "MPI_X"), looked up once per wrapper) instead of
 * PMPI_X, so that another PMPI tool loaded after this one records the same calls:
 * LD_PRELOAD=commaware_chain.so:libdumpi.so records a run in both (tests/peers/dumpi_record.py).
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef COMMAWARE_RECORD_CHAIN
#include <dlfcn.h>
#endif

/* ------------------------------------------------------------------------------------------ */
/* State */

static FILE *out_file;
static FILE *times_file;   /* rank-R.times: when each op's call ran, for `trace record --format otf2` */
static char out_dir[3072];
static int world_rank = -1;
static int recording;      /* between MPI_Init and MPI_Finalize */
static int in_call;        /* re-entrancy guard */
static int first_op = 1;
static uint64_t last_exit_ns;
static uint64_t pending_compute_ns;
static uint64_t start_ns;  /* when MPI_Init returned: time 0 of rank-R.times */
static uint64_t finalize_ns; /* when MPI_Finalize was called */
static uint64_t n_calls, n_ops;
static uint32_t *overheads;
static size_t n_overheads, cap_overheads;
#define MAX_OVERHEAD_SAMPLES (1u << 24)
static uint64_t overhead_total_ns;
#define MAX_PROBLEMS 8
static char problems[MAX_PROBLEMS][256];
static int n_problems;
static uint64_t n_problem_calls;
static uint64_t untracked_waits;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void problem(const char *fmt, const char *what) {
  n_problem_calls++;
  for (int i = 0; i < n_problems; i++)
    if (strncmp(problems[i], what, strlen(what)) == 0) return;
  if (n_problems < MAX_PROBLEMS) snprintf(problems[n_problems++], sizeof problems[0], fmt, what);
}

/* ------------------------------------------------------------------------------------------ */
/* Communicators: handle -> local id (world 0, then creation order on this rank). */

typedef struct { MPI_Comm comm; int id; int live; } comm_entry;
static comm_entry *comms;
static int n_comms, cap_comms, next_comm_id;

static void comm_add(MPI_Comm c, int id) {
  if (n_comms == cap_comms) {
    cap_comms = cap_comms ? 2 * cap_comms : 16;
    comms = realloc(comms, (size_t)cap_comms * sizeof *comms);
    if (!comms) abort();
  }
  comms[n_comms].comm = c;
  comms[n_comms].id = id;
  comms[n_comms].live = 1;
  n_comms++;
}

/* The local id of `c`, or -1 when it was not created by a recorded call. */
static int comm_id(MPI_Comm c, const char *call) {
  if (c == MPI_COMM_WORLD) return 0;
  for (int i = n_comms - 1; i >= 0; i--)
    if (comms[i].live && comms[i].comm == c) return comms[i].id;
  problem("%s on a communicator not made by MPI_Comm_split or MPI_Comm_dup from MPI_COMM_WORLD", call);
  return -1;
}

/* ------------------------------------------------------------------------------------------ */
/* Requests: handle -> our request number (open addressing, linear probing, tombstones). */

typedef struct { uint64_t key; int64_t id; int state; } req_entry; /* state 0 empty, 1 used, 2 deleted */
static req_entry *reqs;
static size_t cap_reqs, n_reqs_used, n_reqs_slots;
static int64_t next_req_id, live_reqs;

static uint64_t req_key(MPI_Request r) {
  uint64_t k = 0;
  memcpy(&k, &r, sizeof r < sizeof k ? sizeof r : sizeof k);
  return k;
}

static size_t req_hash(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  return (size_t)k;
}

static void req_rehash(size_t cap) {
  req_entry *old = reqs;
  size_t old_cap = cap_reqs;
  reqs = calloc(cap, sizeof *reqs);
  if (!reqs) abort();
  cap_reqs = cap;
  n_reqs_slots = 0;
  n_reqs_used = 0;
  for (size_t i = 0; i < old_cap; i++)
    if (old[i].state == 1) {
      size_t j = req_hash(old[i].key) & (cap - 1);
      while (reqs[j].state) j = (j + 1) & (cap - 1);
      reqs[j] = old[i];
      n_reqs_slots++;
      n_reqs_used++;
    }
  free(old);
}

static void req_put(MPI_Request r, int64_t id) {
  if ((n_reqs_slots + 1) * 2 > cap_reqs) req_rehash(cap_reqs < 64 ? 64 : (n_reqs_used * 4 > cap_reqs ? cap_reqs * 2 : cap_reqs));
  uint64_t k = req_key(r);
  size_t j = req_hash(k) & (cap_reqs - 1);
  while (reqs[j].state == 1 && reqs[j].key != k) j = (j + 1) & (cap_reqs - 1);
  if (reqs[j].state == 1) { reqs[j].id = id; return; } /* a stale handle reused: replace */
  /* find the first free slot along the chain */
  j = req_hash(k) & (cap_reqs - 1);
  while (reqs[j].state == 1) j = (j + 1) & (cap_reqs - 1);
  if (reqs[j].state == 0) n_reqs_slots++;
  reqs[j].key = k;
  reqs[j].id = id;
  reqs[j].state = 1;
  n_reqs_used++;
  live_reqs++;
}

/* Our number of request `r` (removing it when `take`), or -1. */
static int64_t req_get(MPI_Request r, int take) {
  if (!cap_reqs || r == MPI_REQUEST_NULL) return -1;
  uint64_t k = req_key(r);
  size_t j = req_hash(k) & (cap_reqs - 1);
  while (reqs[j].state) {
    if (reqs[j].state == 1 && reqs[j].key == k) {
      int64_t id = reqs[j].id;
      if (take) {
        reqs[j].state = 2;
        n_reqs_used--;
        live_reqs--;
      }
      return id;
    }
    j = (j + 1) & (cap_reqs - 1);
  }
  return -1;
}

/* ------------------------------------------------------------------------------------------ */
/* Output */

static void flush_compute(void) {
  if (pending_compute_ns == 0 || !out_file) return;
  fprintf(out_file, "%s{\"op\":\"compute\",\"seconds\":%llu.%09llu}\n", first_op ? "" : ",",
          (unsigned long long)(pending_compute_ns / 1000000000ull), (unsigned long long)(pending_compute_ns % 1000000000ull));
  first_op = 0;
  n_ops++;
  pending_compute_ns = 0;
}

typedef struct { uint64_t t0, t1, t2; int active; } call_t;
static const call_t *current_call; /* the intercepted call being recorded */

/* The times of an op, one line in rank-R.times: when its call started and ended, on the rank's
 * clock that starts when MPI_Init returned and excludes the recorder's own time (its overhead
 * in the calls before), so that the time between two ops' lines is exactly the compute op the
 * trace holds between them. */
static void put_times(void) {
  if (!times_file) return;
  const call_t *c = current_call;
  uint64_t enter = c ? c->t0 - start_ns - overhead_total_ns : now_ns() - start_ns - overhead_total_ns;
  uint64_t inside = c && c->t2 >= c->t1 ? c->t2 - c->t1 : 0;
  fprintf(times_file, "%llu %llu\n", (unsigned long long)enter, (unsigned long long)(enter + inside));
}

/* Start an op: the compute burst before it, then the op's own text (printf-style). */
static void op_begin(void) {
  flush_compute();
  put_times();
  fputs(first_op ? "{" : ",{", out_file);
  first_op = 0;
  n_ops++;
}

static void op_end(int comm) {
  if (comm > 0) fprintf(out_file, ",\"comm\":%d", comm);
  fputs("}\n", out_file);
}

static void put_peer(const char *field, int peer) {
  if (peer == MPI_ANY_SOURCE) fprintf(out_file, ",\"%s\":\"any\"", field);
  else fprintf(out_file, ",\"%s\":%d", field, peer);
}

static void put_tag(const char *field, int tag) {
  if (tag == MPI_ANY_TAG) fprintf(out_file, ",\"%s\":\"any\"", field);
  else fprintf(out_file, ",\"%s\":%d", field, tag);
}

static long long type_bytes(MPI_Datatype dt, long long count) {
  int size = 0;
  if (dt == MPI_DATATYPE_NULL || count == 0) return 0;
  PMPI_Type_size(dt, &size);
  return (long long)size * count;
}

static int comm_size_of(MPI_Comm c) {
  int p = 0;
  PMPI_Comm_size(c, &p);
  return p;
}

/* A list of p byte counts: counts[i] * size, or only `own` at index `me` when counts is NULL. */
static void put_list(int p, const int *counts, long long size, int me, long long own) {
  fputs(",\"bytes\":[", out_file);
  for (int i = 0; i < p; i++) {
    long long v = counts ? (long long)counts[i] * size : (i == me ? own : 0);
    if (counts && i == me && own >= 0) v = own;
    fprintf(out_file, "%s%lld", i ? "," : "", v);
  }
  fputc(']', out_file);
}

/* ------------------------------------------------------------------------------------------ */
/* Call bracketing */

/* On entry: the time since the last call is compute; returns whether to record. */
static call_t enter(void) {
  call_t c = {0, 0, 0, 0};
  if (!recording || in_call) return c;
  c.t0 = now_ns();
  c.active = 1;
  in_call = 1;
  pending_compute_ns += c.t0 - last_exit_ns;
  n_calls++;
  return c;
}

static void before_pmpi(call_t *c) {
  if (c->active) c->t1 = now_ns();
}

static void after_pmpi(call_t *c) {
  if (c->active) c->t2 = now_ns();
  current_call = c->active ? c : NULL;
}

/* On exit: `recorded` says whether an op was written; if not, the time inside the MPI
 * call counts as compute. */
static void leave(call_t *c, int recorded) {
  if (!c->active) return;
  if (!recorded) pending_compute_ns += c->t2 - c->t1;
  uint64_t t3 = now_ns();
  uint64_t overhead = (c->t1 - c->t0) + (t3 - c->t2);
  overhead_total_ns += overhead;
  if (n_overheads < MAX_OVERHEAD_SAMPLES) {
    if (n_overheads == cap_overheads) {
      cap_overheads = cap_overheads ? 2 * cap_overheads : 4096;
      overheads = realloc(overheads, cap_overheads * sizeof *overheads);
      if (!overheads) abort();
    }
    overheads[n_overheads++] = overhead > UINT32_MAX ? UINT32_MAX : (uint32_t)overhead;
  }
  last_exit_ns = t3;
  current_call = NULL;
  in_call = 0;
}

/* The MPI function a wrapper of MPI_X calls: PMPI_X, or in a chained build the next MPI_X. */
#ifdef COMMAWARE_RECORD_CHAIN
static void *next_symbol(const char *name) {
  void *f = dlsym(RTLD_NEXT, name);
  if (!f) {
    fprintf(stderr, "commaware recorder: no next definition of %s (%s)\n", name, dlerror());
    abort();
  }
  return f;
}
#define NEXT(NAME)                                             \
  (*({                                                         \
    static __typeof__(&NAME) next_;                            \
    if (!next_) next_ = (__typeof__(&NAME))next_symbol(#NAME); \
    next_;                                                     \
  }))
#else
#define NEXT(NAME) P##NAME
#endif

#define BEGIN call_t cc_ = enter()
#define CALL(expr) before_pmpi(&cc_); int rc_ = (expr); after_pmpi(&cc_)
#define OK (cc_.active && rc_ == MPI_SUCCESS)

/* The wrapper NAME PARAMS of a call that writes at most one op: NEXT(NAME) ARGS, then RECORD (the
 * last argument), an expression over the call's arguments and its code rc_ that writes the op or
 * nothing and says whether it wrote one. */
#define RECORDING(NAME, PARAMS, ARGS, ...) \
  int NAME PARAMS {                        \
    BEGIN;                                 \
    CALL(NEXT(NAME) ARGS);                 \
    leave(&cc_, __VA_ARGS__);              \
    return rc_;                            \
  }

/* ------------------------------------------------------------------------------------------ */
/* Start and end */

static void write_text(const char *suffix, const char *text) {
  char path[3200];
  snprintf(path, sizeof path, "%s/rank-%d.%s", out_dir, world_rank, suffix);
  FILE *f = fopen(path, "w");
  if (!f) return;
  fputs(text, f);
  fclose(f);
}

static void at_exit(int status, void *arg) {
  (void)arg;
  if (world_rank < 0) return;
  if (out_file) fflush(out_file);
  char text[64];
  snprintf(text, sizeof text, "%d\n", status);
  write_text("exit", text);
}

static void start(void) {
  const char *dir = getenv("COMMAWARE_RECORD_DIR");
  if (!dir || !*dir) return;
  snprintf(out_dir, sizeof out_dir, "%s", dir);
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  char path[3200];
  snprintf(path, sizeof path, "%s/rank-%d.part", out_dir, world_rank);
  out_file = fopen(path, "w");
  if (!out_file) {
    fprintf(stderr, "commaware recorder: rank %d cannot write %s\n", world_rank, path);
    return;
  }
  setvbuf(out_file, NULL, _IOFBF, 1 << 20);
  const char *times = getenv("COMMAWARE_RECORD_TIMES"); /* set for --format otf2 only */
  if (times && strcmp(times, "1") == 0) {
    snprintf(path, sizeof path, "%s/rank-%d.times", out_dir, world_rank);
    times_file = fopen(path, "w");
    if (times_file) setvbuf(times_file, NULL, _IOFBF, 1 << 16);
  }
  on_exit(at_exit, NULL);
  next_comm_id = 1;
  recording = 1;
  last_exit_ns = now_ns();
  start_ns = last_exit_ns;
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

static void finish(void) {
  if (!recording) return;
  flush_compute();
  if (times_file) { /* the last line: when MPI_Finalize was called, on the same clock */
    fprintf(times_file, "end %llu\n", (unsigned long long)((in_call ? last_exit_ns : finalize_ns) - start_ns - overhead_total_ns));
    fclose(times_file);
    times_file = NULL;
  }
  recording = 0;
  fclose(out_file);
  out_file = NULL;
  double median = 0, p90 = 0;
  if (n_overheads) {
    qsort(overheads, n_overheads, sizeof *overheads, cmp_u32);
    median = n_overheads % 2 ? overheads[n_overheads / 2]
                             : 0.5 * ((double)overheads[n_overheads / 2 - 1] + overheads[n_overheads / 2]);
    p90 = overheads[(size_t)(0.9 * (double)(n_overheads - 1))];
  }
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  for (char *h = host; *h; h++)
    if (*h == '"' || *h == '\\' || (unsigned char)*h < 32) *h = '_';
  int p = comm_size_of(MPI_COMM_WORLD);
  char text[4096 + MAX_PROBLEMS * 300];
  int n = snprintf(text, sizeof text,
                   "{\"rank\":%d,\"size\":%d,\"host\":\"%s\",\"calls\":%llu,\"ops\":%llu,"
                   "\"overhead_ns\":{\"median\":%.1f,\"p90\":%.1f,\"mean\":%.1f,\"samples\":%zu},"
                   "\"untracked_waits\":%llu,\"problem_calls\":%llu,\"problems\":[",
                   world_rank, p, host, (unsigned long long)n_calls, (unsigned long long)n_ops, median, p90,
                   n_calls ? (double)overhead_total_ns / (double)n_calls : 0.0, n_overheads,
                   (unsigned long long)untracked_waits, (unsigned long long)n_problem_calls);
  for (int i = 0; i < n_problems && n < (int)sizeof text - 300; i++)
    n += snprintf(text + n, sizeof text - n, "%s\"%s\"", i ? "," : "", problems[i]);
  snprintf(text + n, sizeof text - n, "]}\n");
  write_text("meta", text);
}

int MPI_Init(int *argc, char ***argv) {
  int rc = NEXT(MPI_Init)(argc, argv);
  if (rc == MPI_SUCCESS) start();
  return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  int rc = NEXT(MPI_Init_thread)(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) start();
  return rc;
}

int MPI_Finalize(void) {
  finalize_ns = now_ns();
  if (recording && !in_call) pending_compute_ns += finalize_ns - last_exit_ns;
  finish();
  return NEXT(MPI_Finalize)();
}

int MPI_Abort(MPI_Comm comm, int errorcode) {
  if (world_rank >= 0) {
    if (out_file) fflush(out_file);
    char text[64];
    snprintf(text, sizeof text, "%d\n", errorcode);
    write_text("abort", text);
  }
  return NEXT(MPI_Abort)(comm, errorcode);
}

/* ------------------------------------------------------------------------------------------ */
/* Point to point */

static int send_common(const char *op, const char *call, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                       int sync, int rc, call_t *c, MPI_Request *request) {
  if (!(c->active && rc == MPI_SUCCESS) || dest == MPI_PROC_NULL) return 0;
  int id = comm_id(comm, call);
  if (id < 0) return 0;
  op_begin();
  fprintf(out_file, "\"op\":\"%s\",\"dst\":%d,\"bytes\":%lld,\"tag\":%d%s", op, dest, type_bytes(dt, count), tag,
          sync ? ",\"sync\":true" : "");
  op_end(id);
  if (request) req_put(*request, next_req_id++);
  return 1;
}

static int recv_common(const char *op, const char *call, int source, int tag, MPI_Comm comm, int rc, call_t *c,
                       MPI_Request *request) {
  if (!(c->active && rc == MPI_SUCCESS) || source == MPI_PROC_NULL) return 0;
  int id = comm_id(comm, call);
  if (id < 0) return 0;
  op_begin();
  fprintf(out_file, "\"op\":\"%s\"", op);
  put_peer("src", source);
  put_tag("tag", tag);
  op_end(id);
  if (request) req_put(*request, next_req_id++);
  return 1;
}

#define SEND_PARAMS (const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
#define SEND_WRAPPER(NAME, OP, SYNC) \
  RECORDING(NAME, SEND_PARAMS, (buf, count, dt, dest, tag, comm), \
            send_common(OP, #NAME, count, dt, dest, tag, comm, SYNC, rc_, &cc_, NULL))
SEND_WRAPPER(MPI_Send, "send", 0)
SEND_WRAPPER(MPI_Ssend, "send", 1)
SEND_WRAPPER(MPI_Bsend, "send", 0)
SEND_WRAPPER(MPI_Rsend, "send", 0)

#define ISEND_PARAMS (const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *req)
#define ISEND_WRAPPER(NAME, OP, SYNC) \
  RECORDING(NAME, ISEND_PARAMS, (buf, count, dt, dest, tag, comm, req), \
            send_common(OP, #NAME, count, dt, dest, tag, comm, SYNC, rc_, &cc_, req))
ISEND_WRAPPER(MPI_Isend, "isend", 0)
ISEND_WRAPPER(MPI_Issend, "isend", 1)
ISEND_WRAPPER(MPI_Ibsend, "isend", 0)
ISEND_WRAPPER(MPI_Irsend, "isend", 0)

RECORDING(MPI_Recv, (void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Status *status),
          (buf, count, dt, source, tag, comm, status),
          recv_common("recv", "MPI_Recv", source, tag, comm, rc_, &cc_, NULL))

RECORDING(MPI_Irecv, (void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Request *req),
          (buf, count, dt, source, tag, comm, req),
          recv_common("irecv", "MPI_Irecv", source, tag, comm, rc_, &cc_, req))

static int sendrecv_common(const char *call, long long send_bytes, int dest, int sendtag, int source, int recvtag,
                           MPI_Comm comm, int rc, call_t *c) {
  if (!(c->active && rc == MPI_SUCCESS)) return 0;
  if (dest == MPI_PROC_NULL && source == MPI_PROC_NULL) return 0;
  int id = comm_id(comm, call);
  if (id < 0) return 0;
  op_begin();
  if (source == MPI_PROC_NULL) {
    fprintf(out_file, "\"op\":\"send\",\"dst\":%d,\"bytes\":%lld,\"tag\":%d", dest, send_bytes, sendtag);
  } else if (dest == MPI_PROC_NULL) {
    fputs("\"op\":\"recv\"", out_file);
    put_peer("src", source);
    put_tag("tag", recvtag);
  } else {
    fprintf(out_file, "\"op\":\"sendrecv\",\"dst\":%d,\"bytes\":%lld,\"tag\":%d", dest, send_bytes, sendtag);
    put_peer("src", source);
    put_tag("recvtag", recvtag);
  }
  op_end(id);
  return 1;
}

RECORDING(MPI_Sendrecv,
          (const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf, int rcount,
           MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status *status),
          (sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, status),
          sendrecv_common("MPI_Sendrecv", OK ? type_bytes(stype, scount) : 0, dest, stag, source, rtag, comm, rc_, &cc_))

RECORDING(MPI_Sendrecv_replace,
          (void *buf, int count, MPI_Datatype dt, int dest, int stag, int source, int rtag, MPI_Comm comm,
           MPI_Status *status),
          (buf, count, dt, dest, stag, source, rtag, comm, status),
          sendrecv_common("MPI_Sendrecv_replace", OK ? type_bytes(dt, count) : 0, dest, stag, source, rtag, comm, rc_,
                          &cc_))

/* ------------------------------------------------------------------------------------------ */
/* Completion */

static int put_wait(int64_t id) {
  op_begin();
  fprintf(out_file, "\"op\":\"wait\",\"req\":%lld", (long long)id);
  op_end(0);
  return 1;
}

int MPI_Wait(MPI_Request *req, MPI_Status *status) {
  BEGIN;
  int64_t id = cc_.active ? req_get(*req, 1) : -1; /* a failed wait aborts the job */
  if (cc_.active && id < 0 && *req != MPI_REQUEST_NULL) untracked_waits++;
  CALL(NEXT(MPI_Wait)(req, status));
  int rec = 0;
  if (OK && id >= 0) rec = put_wait(id);
  leave(&cc_, rec);
  return rc_;
}

/* The requests of an array, looked up before the call nulls them: our number of each (-1 when
 * untracked) and, after them, a copy of the handles (to forget the completed ones). */
static int64_t *ids_of(int n, MPI_Request *array, int *found) {
  size_t m = (size_t)(n > 0 ? n : 1);
  int64_t *ids = malloc(m * sizeof *ids + m * sizeof(MPI_Request));
  if (!ids) abort();
  MPI_Request *handles = (MPI_Request *)(ids + m);
  *found = 0;
  for (int i = 0; i < n; i++) {
    handles[i] = array[i];
    ids[i] = req_get(array[i], 0);
    if (ids[i] >= 0) (*found)++;
    else if (array[i] != MPI_REQUEST_NULL) untracked_waits++;
  }
  return ids;
}

/* Forget request i of an `ids_of` array (it completed). */
static void forget_at(int64_t *ids, int n, int i) {
  size_t m = (size_t)(n > 0 ? n : 1);
  MPI_Request *handles = (MPI_Request *)(ids + m);
  if (ids[i] >= 0) req_get(handles[i], 1);
}

/* All requests of `ids` completed: one waitall when they are every pending request of the
 * rank, else a wait per request in array order. */
static int put_all(int n, int64_t *ids, int found) {
  if (found == 0) return 0;
  int64_t pending = live_reqs;
  if (found == pending) {
    op_begin();
    fputs("\"op\":\"waitall\"", out_file);
    op_end(0);
  } else {
    for (int i = 0; i < n; i++)
      if (ids[i] >= 0) put_wait(ids[i]);
  }
  for (int i = 0; i < n; i++) forget_at(ids, n, i);
  return 1;
}

/* Request `index` of an `ids_of` array completed (MPI_UNDEFINED: none): its wait, if tracked. */
static int put_any(int n, int index, int64_t *ids) {
  if (index == MPI_UNDEFINED || ids[index] < 0) return 0;
  int rec = put_wait(ids[index]);
  forget_at(ids, n, index);
  return rec;
}

static int put_some(int n, int outcount, const int *indices, int64_t *ids) {
  int rec = 0;
  if (outcount == MPI_UNDEFINED) return 0;
  for (int k = 0; k < outcount; k++)
    if (ids[indices[k]] >= 0) {
      rec = put_wait(ids[indices[k]]);
      forget_at(ids, n, indices[k]);
    }
  return rec;
}

/* The wrapper of a completion call on `n` requests of `array`: their numbers are looked up before
 * the call (which nulls the handles of completed requests) into `ids` (`found` of them tracked);
 * after a successful call, RECORD (the last argument) writes what completed and says whether it
 * wrote anything. */
#define ARRAY_COMPLETION(NAME, PARAMS, ARGS, ...)                 \
  int NAME PARAMS {                                               \
    BEGIN;                                                        \
    int found = 0;                                                \
    int64_t *ids = cc_.active ? ids_of(n, array, &found) : NULL; \
    CALL(NEXT(NAME) ARGS);                                        \
    int rec = OK ? (__VA_ARGS__) : 0;                             \
    free(ids);                                                    \
    leave(&cc_, rec);                                             \
    return rc_;                                                   \
  }

ARRAY_COMPLETION(MPI_Waitall, (int n, MPI_Request *array, MPI_Status *statuses), (n, array, statuses),
                 put_all(n, ids, found))
ARRAY_COMPLETION(MPI_Testall, (int n, MPI_Request *array, int *flag, MPI_Status *statuses),
                 (n, array, flag, statuses), *flag ? put_all(n, ids, found) : 0)
ARRAY_COMPLETION(MPI_Waitany, (int n, MPI_Request *array, int *index, MPI_Status *status), (n, array, index, status),
                 put_any(n, *index, ids))
ARRAY_COMPLETION(MPI_Testany, (int n, MPI_Request *array, int *index, int *flag, MPI_Status *status),
                 (n, array, index, flag, status), *flag ? put_any(n, *index, ids) : 0)
ARRAY_COMPLETION(MPI_Waitsome, (int n, MPI_Request *array, int *outcount, int *indices, MPI_Status *statuses),
                 (n, array, outcount, indices, statuses), put_some(n, *outcount, indices, ids))
ARRAY_COMPLETION(MPI_Testsome, (int n, MPI_Request *array, int *outcount, int *indices, MPI_Status *statuses),
                 (n, array, outcount, indices, statuses), put_some(n, *outcount, indices, ids))

/* A test that finds its request complete is a wait that returns at once; one that finds it
 * pending records nothing (its time counts as compute). */
int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status) {
  BEGIN;
  MPI_Request handle = *req;
  int64_t id = cc_.active ? req_get(handle, 0) : -1;
  CALL(NEXT(MPI_Test)(req, flag, status));
  int rec = 0;
  if (OK && *flag && id >= 0) {
    rec = put_wait(id);
    req_get(handle, 1);
  }
  leave(&cc_, rec);
  return rc_;
}

int MPI_Request_free(MPI_Request *req) {
  BEGIN;
  if (cc_.active) req_get(*req, 1);
  CALL(NEXT(MPI_Request_free)(req));
  leave(&cc_, 0);
  return rc_;
}

/* ------------------------------------------------------------------------------------------ */
/* Collectives */

static int rank_in(MPI_Comm c) {
  int me = 0;
  PMPI_Comm_rank(c, &me);
  return me;
}

/* `"op":"OP","root":ROOT,"bytes":BYTES` */
static void put_rooted(const char *op, int root, long long bytes) {
  fprintf(out_file, "\"op\":\"%s\",\"root\":%d,\"bytes\":%lld", op, root, bytes);
}

/* `"op":"OP","bytes":BYTES` */
static void put_sized(const char *op, long long bytes) {
  fprintf(out_file, "\"op\":\"%s\",\"bytes\":%lld", op, bytes);
}

/* The bytes a rank gives to an all-to-all exchange: its receive block when it sends in place. */
static long long own_bytes(const void *sbuf, MPI_Datatype stype, int scount, MPI_Datatype rtype, int rcount) {
  return sbuf == MPI_IN_PLACE ? type_bytes(rtype, rcount) : type_bytes(stype, scount);
}

/* put_list over the ranks of `comm` (this rank's entry `own` when >= 0). */
static void put_comm_list(MPI_Comm comm, const int *counts, long long size, long long own) {
  put_list(comm_size_of(comm), counts, size, rank_in(comm), own);
}

/* The wrapper NAME PARAMS of a collective on `comm`: NEXT(NAME) ARGS, then, when the call is
 * recorded (a successful call on a known communicator, whose local id is id_), the op: RECORD (the
 * last argument, statements that write its fields), then END. */
#define RECORDED(NAME, PARAMS, ARGS, END, ...)        \
  int NAME PARAMS {                                   \
    BEGIN;                                            \
    CALL(NEXT(NAME) ARGS);                            \
    int id_ = OK ? comm_id(comm, #NAME) : -1;         \
    int rec_ = id_ >= 0;                              \
    if (rec_) {                                       \
      op_begin();                                     \
      __VA_ARGS__                                     \
      END;                                            \
    }                                                 \
    leave(&cc_, rec_);                                \
    return rc_;                                       \
  }
/* A collective: its op ends with its communicator (when not the world). */
#define COLLECTIVE(NAME, PARAMS, ARGS, ...) RECORDED(NAME, PARAMS, ARGS, op_end(id_), __VA_ARGS__)

COLLECTIVE(MPI_Barrier, (MPI_Comm comm), (comm), fputs("\"op\":\"barrier\"", out_file);)

COLLECTIVE(MPI_Bcast, (void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm), (buf, count, dt, root, comm),
           put_rooted("bcast", root, type_bytes(dt, count));)

COLLECTIVE(MPI_Reduce, (const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm),
           (sbuf, rbuf, count, dt, op, root, comm), put_rooted("reduce", root, type_bytes(dt, count));)

#define BUFFER_OP(NAME, OPNAME)                                                                          \
  COLLECTIVE(NAME, (const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm), \
             (sbuf, rbuf, count, dt, op, comm), put_sized(OPNAME, type_bytes(dt, count));)
BUFFER_OP(MPI_Allreduce, "allreduce")
BUFFER_OP(MPI_Scan, "scan")
BUFFER_OP(MPI_Exscan, "exscan")

COLLECTIVE(MPI_Gather,
           (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
            MPI_Comm comm),
           (sbuf, scount, stype, rbuf, rcount, rtype, root, comm),
           put_rooted("gather", root, rank_in(comm) == root ? own_bytes(sbuf, stype, scount, rtype, rcount)
                                                            : type_bytes(stype, scount));)

COLLECTIVE(MPI_Gatherv,
           (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[], const int displs[],
            MPI_Datatype rtype, int root, MPI_Comm comm),
           (sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm),
           int me = rank_in(comm);
           fprintf(out_file, "\"op\":\"gatherv\",\"root\":%d", root);
           if (me == root) {
             long long rsize = type_bytes(rtype, 1);
             put_comm_list(comm, rcounts, rsize,
                           sbuf == MPI_IN_PLACE ? (long long)rcounts[me] * rsize : type_bytes(stype, scount));
           } else {
             put_comm_list(comm, NULL, 0, type_bytes(stype, scount));
           })

COLLECTIVE(MPI_Scatter,
           (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
            MPI_Comm comm),
           (sbuf, scount, stype, rbuf, rcount, rtype, root, comm),
           put_rooted("scatter", root, rank_in(comm) == root ? type_bytes(stype, scount) : type_bytes(rtype, rcount));)

COLLECTIVE(MPI_Scatterv,
           (const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype, void *rbuf, int rcount,
            MPI_Datatype rtype, int root, MPI_Comm comm),
           (sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm),
           fprintf(out_file, "\"op\":\"scatterv\",\"root\":%d", root);
           if (rank_in(comm) == root) put_comm_list(comm, scounts, type_bytes(stype, 1), -1);
           else put_comm_list(comm, NULL, 0, type_bytes(rtype, rcount));)

/* An exchange of equal blocks between all ranks. */
#define ALL_TO_ALL(NAME, OPNAME)                                                                          \
  COLLECTIVE(NAME,                                                                                        \
             (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, \
              MPI_Comm comm),                                                                             \
             (sbuf, scount, stype, rbuf, rcount, rtype, comm),                                            \
             put_sized(OPNAME, own_bytes(sbuf, stype, scount, rtype, rcount));)
ALL_TO_ALL(MPI_Allgather, "allgather")
ALL_TO_ALL(MPI_Alltoall, "alltoall")

COLLECTIVE(MPI_Allgatherv,
           (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[], const int displs[],
            MPI_Datatype rtype, MPI_Comm comm),
           (sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm),
           fputs("\"op\":\"allgatherv\"", out_file);
           put_comm_list(comm, rcounts, type_bytes(rtype, 1), -1);)

COLLECTIVE(MPI_Alltoallv,
           (const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void *rbuf,
            const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm),
           (sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm),
           fputs("\"op\":\"alltoallv\"", out_file);
           if (sbuf == MPI_IN_PLACE) put_comm_list(comm, rcounts, type_bytes(rtype, 1), -1);
           else put_comm_list(comm, scounts, type_bytes(stype, 1), -1);)

COLLECTIVE(MPI_Reduce_scatter,
           (const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype dt, MPI_Op op, MPI_Comm comm),
           (sbuf, rbuf, rcounts, dt, op, comm),
           fputs("\"op\":\"reduce_scatter\"", out_file);
           put_comm_list(comm, rcounts, type_bytes(dt, 1), -1);)

COLLECTIVE(MPI_Reduce_scatter_block,
           (const void *sbuf, void *rbuf, int rcount, MPI_Datatype dt, MPI_Op op, MPI_Comm comm),
           (sbuf, rbuf, rcount, dt, op, comm),
           int p = comm_size_of(comm);
           long long b = type_bytes(dt, rcount);
           fputs("\"op\":\"reduce_scatter\",\"bytes\":[", out_file);
           for (int i = 0; i < p; i++) fprintf(out_file, "%s%lld", i ? "," : "", b);
           fputc(']', out_file);)

/* ------------------------------------------------------------------------------------------ */
/* Communicators */

/* A call that makes a communicator: RECORD writes the whole op, its communicator included, and
 * numbers the new communicator. */
#define COMM_MAKER(NAME, PARAMS, ARGS, ...) RECORDED(NAME, PARAMS, ARGS, (void)0, __VA_ARGS__)

COMM_MAKER(MPI_Comm_split, (MPI_Comm comm, int color, int key, MPI_Comm *newcomm), (comm, color, key, newcomm),
           fprintf(out_file, "\"op\":\"comm_split\",\"comm\":%d,\"color\":%d,\"key\":%d}\n", id_,
                   color == MPI_UNDEFINED ? -1 : color, key);
           if (*newcomm != MPI_COMM_NULL) comm_add(*newcomm, next_comm_id++);)

COMM_MAKER(MPI_Comm_dup, (MPI_Comm comm, MPI_Comm *newcomm), (comm, newcomm),
           fprintf(out_file, "\"op\":\"comm_dup\",\"comm\":%d}\n", id_);
           comm_add(*newcomm, next_comm_id++);)

int MPI_Comm_free(MPI_Comm *comm) {
  MPI_Comm c = *comm;
  int rc = NEXT(MPI_Comm_free)(comm);
  if (rc == MPI_SUCCESS)
    for (int i = n_comms - 1; i >= 0; i--)
      if (comms[i].live && comms[i].comm == c) { comms[i].live = 0; break; }
  return rc;
}
