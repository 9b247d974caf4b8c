#include <cstdio>

#include "cli/command_specs.h"
#include "cli/verbs.h"
#include "runtime/torch_runtime.h"

namespace shotchain::cli {

int runVersion(const Args& args) {
  (void)kVersionCommand.parse(args);
  const runtime::RuntimeInfo info = runtime::initTorchRuntime();
  std::printf("shotchain %s\nlibtorch %s (%s build)\ndevice: %s\n", SHOTCHAIN_VERSION, info.torchVersion.c_str(),
              info.cudaBuild ? "CUDA" : "CPU", info.device.c_str());
  if (info.cudaBuild) std::printf("CUDA plugin: %s\n", info.cudaPlugin.c_str());
  return 0;
}

}  // namespace shotchain::cli
