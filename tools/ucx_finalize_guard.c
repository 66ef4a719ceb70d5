/* Preloaded into every rank by tools/netbed.sh: bounds a wait inside
 * MPI_Finalize that deadlocks when MPICH 4.0.2 (ch4:ucx) runs over UCX
 * 1.13's TCP transport with three or more ranks.
 *
 * The deadlock, as found on this machine (about one 4-rank job in three,
 * also a program that only calls MPI_Barrier, also outside any namespace):
 * MPICH's finalize hook closes every endpoint with ucp_disconnect_nb, polls
 * ucp_worker_progress until every close completes, then blocks in a PMI
 * barrier (ucx_init.c, MPIDI_UCX_mpi_finalize_hook). UCX's TCP transport
 * marks an endpoint as needing a flush after any active message
 * (UCT_TCP_EP_FLAG_NEED_FLUSH, tcp_ep.c), and flushing it sends an empty
 * put whose acknowledgement the peer must produce in its own progress. A
 * peer that finished closing its endpoints first is already blocked in the
 * PMI barrier and never acknowledges, so this rank polls forever (the
 * same failure as openucx/ucx issue 8738).
 *
 * What the guard changes: a disconnect request still pending GIVE_UP
 * seconds after the first ucp_disconnect_nb of the process is reported
 * complete to MPICH, which then releases it (UCX frees a released request
 * when it completes, or with the worker) and goes on to the PMI barrier.
 * By then the application has completed all its communication (MPI
 * requires it before MPI_Finalize) and, in the deadlock, the peer has
 * received everything it was waiting for (it is in MPI_Finalize too), so
 * only the flush's acknowledgement is abandoned. Nothing else is touched;
 * a job that does not deadlock never reaches the time limit. Each rank
 * that gives up says so once on stderr.
 *
 * Built by netbed.sh with the C compiler (no UCX headers: the two
 * functions are declared here as libucp exports them).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define GIVE_UP 3.0 /* seconds */

typedef void* (*disconnect_fn)(void* ep);
typedef int (*completed_fn)(void* request);

/* MPICH calls these from its finalize hook on one thread (it holds its
 * global lock), so plain statics suffice. */
static double first_disconnect = -1;
static int announced = 0;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void* ucp_disconnect_nb(void* ep) {
  static disconnect_fn real = NULL;
  if (real == NULL) real = (disconnect_fn)dlsym(RTLD_NEXT, "ucp_disconnect_nb");
  if (first_disconnect < 0) first_disconnect = now();
  return real(ep);
}

int ucp_request_is_completed(void* request) {
  static completed_fn real = NULL;
  if (real == NULL) real = (completed_fn)dlsym(RTLD_NEXT, "ucp_request_is_completed");
  if (real(request)) return 1;
  if (first_disconnect < 0 || now() - first_disconnect < GIVE_UP) return 0;
  if (!announced) {
    announced = 1;
    fprintf(stderr,
            "netbed: gave up an endpoint flush in MPI_Finalize after %.0f s (UCX TCP finalize "
            "deadlock, see tools/ucx_finalize_guard.c)\n",
            GIVE_UP);
  }
  return 1;
}
