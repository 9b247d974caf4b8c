#include <nlohmann/json.hpp>

#include "cli/verify/verify_report.h"
#include "io/safetensors_reader.h"
#include "sampling/flow_schedule.h"
#include "sampling/timestep_matrix.h"

namespace shotchain::cli {
namespace {

at::Tensor longTable(const std::vector<std::int64_t>& values, std::int64_t rows, std::int64_t columns) {
  return at::tensor(values, at::TensorOptions().dtype(at::kLong)).reshape({rows, columns});
}

}  // namespace

bool matchesTimestepMatrix(const io::SafetensorsFile& file) {
  return file.header().metadata.contains("calls") && file.find("tsm.case1.step_matrix") != nullptr;
}

// "<case>.step_template / step_matrix / step_index / step_update_mask / valid_interval", the arguments of
// each case in the `calls` metadata. The template is rebuilt from steps and shift (our schedule), then the
// matrix from it: every table must match exactly.
void verifyTimestepMatrix(const io::SafetensorsFile& file, Report& report) {
  const auto calls = nlohmann::json::parse(file.header().metadata.at("calls"));
  for (const auto& [name, call] : calls.items()) {
    const sampling::FlowSchedule schedule =
        sampling::flowMatchingSchedule(call.at("steps").get<int>(), call.at("shift").get<double>());
    const std::vector<std::int64_t>& steps = schedule.timesteps;
    report.compare(name + ".step_template", at::tensor(steps, at::TensorOptions().dtype(at::kLong)),
                   file.tensor(name + ".step_template"));
    sampling::TimestepMatrixRequest request;
    request.frames = call.at("num_frames").get<std::int64_t>();
    request.baseFrames = call.at("base_num_frames").get<std::int64_t>();
    request.arStep = call.at("ar_step").get<std::int64_t>();
    request.readyFrames = call.at("num_pre_ready").get<std::int64_t>();
    request.causalBlockSize = call.at("causal_block_size").get<std::int64_t>();
    const sampling::TimestepMatrix m = sampling::diffusionForcingMatrix(steps, request);
    std::vector<std::int64_t> update(m.update.begin(), m.update.end()), intervals;
    for (const auto& [start, end] : m.validInterval) intervals.insert(intervals.end(), {start, end});
    report.compare(name + ".step_matrix", longTable(m.timesteps, m.rows(), m.frames),
                   file.tensor(name + ".step_matrix"));
    report.compare(name + ".step_index", longTable(m.stepIndex, m.rows(), m.frames), file.tensor(name + ".step_index"));
    report.compare(name + ".step_update_mask", longTable(update, m.rows(), m.frames),
                   file.tensor(name + ".step_update_mask"));
    report.compare(name + ".valid_interval", longTable(intervals, m.rows(), 2), file.tensor(name + ".valid_interval"));
  }
}

}  // namespace shotchain::cli
