#include <cstdio>
#include <filesystem>

#include "cli/command_specs.h"
#include "cli/verbs.h"
#include "resolve/resolve_sequence.h"
#include "sequence/sequence_io.h"

namespace shotchain::cli {

int runValidate(const Args& args) {
  const ParsedOptions parsed = kValidateCommand.parse(args);
  bool allOk = true;
  for (const std::string& file : parsed.operands()) {
    const LoadResult result = loadSequenceFile(file);
    // A document that loads is resolved against its model set: what a render would refuse is refused here.
    const Diagnostics problems =
        result.ok() ? resolve::validate(*result.sequence, {std::filesystem::absolute(file).parent_path()})
                    : result.diagnostics;
    for (const Diagnostic& d : problems) std::printf("%s\n", d.format(file).c_str());
    const bool ok = result.ok() && !hasErrors(problems);
    if (ok) std::printf("%s: ok\n", file.c_str());
    allOk = allOk && ok;
  }
  return allOk ? 0 : 1;
}

}  // namespace shotchain::cli
