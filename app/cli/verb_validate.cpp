#include <cstdio>

#include "cli/command_specs.h"
#include "cli/verbs.h"
#include "sequence/sequence_io.h"

namespace shotchain::cli {

int runValidate(const Args& args) {
  const ParsedOptions parsed = kValidateCommand.parse(args);
  bool allOk = true;
  for (const std::string& file : parsed.operands()) {
    const LoadResult result = loadSequenceFile(file);
    for (const Diagnostic& d : result.diagnostics) std::printf("%s\n", d.format(file).c_str());
    if (result.ok()) std::printf("%s: ok\n", file.c_str());
    allOk = allOk && result.ok();
  }
  return allOk ? 0 : 1;
}

}  // namespace shotchain::cli
