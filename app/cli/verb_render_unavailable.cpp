// `shotchain render` in a build configured with -DSHOTCHAIN_BUILD_EXPORT=OFF (no Qt Gui or libav,
// e.g. scripts/device-check on a GPU box): a render there would have nowhere to write its frames.
#include <cstdio>

#include "cli/verbs.h"

namespace shotchain::cli {

int runRender(const Args&) {
  std::fprintf(stderr,
               "shotchain render: this build has no render outputs (configured with -DSHOTCHAIN_BUILD_EXPORT=OFF: "
               "no Qt Gui or libav); `shotchain bench residency` renders without them\n");
  return 4;
}

}  // namespace shotchain::cli
