#include "runtime/thread_intra_op.h"

#include <ATen/Parallel.h>

#if defined(SHOTCHAIN_HAVE_OPENMP) && AT_PARALLEL_OPENMP
#include <omp.h>
#define SHOTCHAIN_PER_THREAD_TEAMS 1
#endif

namespace shotchain::runtime {

ThisThreadIntraOpThreads::ThisThreadIntraOpThreads(int threads) {
#ifdef SHOTCHAIN_PER_THREAD_TEAMS
  // libtorch sets a thread's team size from the process-wide count at its first parallel call;
  // doing that now keeps it from overwriting ours later.
  at::internal::lazy_init_num_threads();
  previous_ = omp_get_max_threads();
  omp_set_num_threads(threads > 0 ? threads : 1);
#else
  (void)threads;
#endif
}

ThisThreadIntraOpThreads::~ThisThreadIntraOpThreads() {
#ifdef SHOTCHAIN_PER_THREAD_TEAMS
  omp_set_num_threads(previous_);
#endif
}

int thisThreadIntraOpThreads() {
#ifdef SHOTCHAIN_PER_THREAD_TEAMS
  at::internal::lazy_init_num_threads();
  return omp_get_max_threads();
#else
  return at::get_num_threads();
#endif
}

}  // namespace shotchain::runtime
