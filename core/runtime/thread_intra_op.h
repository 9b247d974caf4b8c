#pragma once

namespace shotchain::runtime {

// Sets how many intra-op threads libtorch uses on the calling thread only, until the scope ends.
// OpenMP keeps the team size per thread, so the render thread and any thread started later keep
// the process-wide count (at::set_num_threads would change that count for every new thread and
// resize the shared pthreadpool). The PyPI wheel's libtorch brings its own libgomp, which every
// library of the process then shares (one soname), so this reaches its kernels too. Without OpenMP
// in this build it changes nothing.
class ThisThreadIntraOpThreads {
 public:
  explicit ThisThreadIntraOpThreads(int threads);
  ~ThisThreadIntraOpThreads();
  ThisThreadIntraOpThreads(const ThisThreadIntraOpThreads&) = delete;
  ThisThreadIntraOpThreads& operator=(const ThisThreadIntraOpThreads&) = delete;

 private:
  int previous_ = 0;
};

// The team size that libtorch's OpenMP regions started on the calling thread get (its OpenMP
// nthreads setting); at::get_num_threads() reports the process-wide count on every thread.
int thisThreadIntraOpThreads();

}  // namespace shotchain::runtime
