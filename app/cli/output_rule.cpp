#include "cli/output_rule.h"

#include "util/atomic_file.h"
#include "util/write_target.h"

namespace shotchain::cli {

std::string outputRefusal(const std::filesystem::path& out, const std::vector<std::filesystem::path>& inputs,
                          bool force) {
  std::filesystem::path target;
  try {
    target = util::resolveWriteTarget(out);
  } catch (const util::FileWriteError& error) {
    return error.what();
  }
  for (const std::filesystem::path& input : inputs) {
    std::error_code error;
    if (input.empty() || !std::filesystem::equivalent(target, input, error)) continue;
    const std::string which = out == input    ? ""
                              : target == out ? " (" + input.string() + " by another name)"
                                              : " (a link to " + input.string() + ")";
    return out.string() + which + " is a file this command reads: it is never written over; give another file";
  }
  std::error_code error;
  if (std::filesystem::exists(out, error) && !force) return out.string() + " exists; give another file or --force";
  return "";
}

}  // namespace shotchain::cli
