#include <cstdlib>

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include "distributed/c10d_backend.h"

namespace shotchain::distributed {

c10::intrusive_ptr<CollectiveBackend> makeGlooBackend(const c10::intrusive_ptr<::c10d::Store>& store, int rank,
                                                      int size, std::chrono::milliseconds timeout,
                                                      const std::string& host) {
  auto options = ::c10d::ProcessGroupGloo::Options::create(timeout);
  const char* interface = std::getenv("GLOO_SOCKET_IFNAME");
  if (interface != nullptr && *interface != '\0')
    options->devices.push_back(::c10d::ProcessGroupGloo::createDeviceForInterface(interface));
  else if (!host.empty())
    options->devices.push_back(::c10d::ProcessGroupGloo::createDeviceForHostname(host));
  else
    options->devices.push_back(::c10d::ProcessGroupGloo::createDefaultDevice());
  options->threads = 2;
  return c10::make_intrusive<::c10d::ProcessGroupGloo>(store, rank, size, options);
}

}  // namespace shotchain::distributed
