#pragma once

#include <filesystem>
#include <string>

#include "render/render_options.h"

namespace shotchain::render {

// report.json (everything in the summary, nested) and report.csv (the same figures in long form:
// section,index,field,value — one row per figure, so a spreadsheet can pivot any of them).
// Atomic writes; throws FileWriteError naming the file.
void writeRenderReport(const std::filesystem::path& out, const Sequence& sequence, const RenderSummary& summary);
std::string renderReportJson(const Sequence& sequence, const RenderSummary& summary);
std::string renderReportCsv(const Sequence& sequence, const RenderSummary& summary);

}  // namespace shotchain::render
