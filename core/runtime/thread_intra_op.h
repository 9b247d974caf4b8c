#pragma once

namespace shotchain::runtime {

// Sets how many intra-op threads libtorch uses on the calling thread only, until the scope ends.
// OpenMP keeps the team size per thread, so the render thread and any thread started later keep
// the process-wide count (at::set_num_threads would change that count for every new thread and
// resize the shared pthreadpool). Without OpenMP in this build, or where libtorch bundles its own
// OpenMP runtime (PyPI wheels: the decode there runs on the GPU), it changes nothing.
class ThisThreadIntraOpThreads {
 public:
  explicit ThisThreadIntraOpThreads(int threads);
  ~ThisThreadIntraOpThreads();
  ThisThreadIntraOpThreads(const ThisThreadIntraOpThreads&) = delete;
  ThisThreadIntraOpThreads& operator=(const ThisThreadIntraOpThreads&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace shotchain::runtime
