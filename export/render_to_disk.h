#pragma once

#include <optional>
#include <string>

#include "export/sequence_outputs.h"
#include "render/renderer.h"

namespace shotchain::exporting {

struct RenderedToDisk {
  render::RenderSummary summary;
  // sequence.mp4 and sequence.otio, written when every requested shot was done.
  std::optional<FinalizedOutputs> outputs;
  // Why they were not, when every requested shot was done but a shot's frames are not all on disk
  // (e.g. a shot range whose other shots were never rendered); empty otherwise.
  std::string outputsError;
};

// A render to disk, the one sequence the CLI and the studio share: `renderer` renders `sequence`
// while a FrameFileWriter writes every decoded frame as OUT/shots/<NN>-<id>/frames/<n>.png and
// hands every event on to `observer`; when every requested shot is done, OUT/sequence.mp4 and
// OUT/sequence.otio follow (finalizeOutputs). OUT is options.outputDirectory; a fallback image is
// read with readPngFrame unless options.loadImage is set. A render refused before any work throws
// render::RenderError, as Renderer::render does.
RenderedToDisk renderToDisk(render::Renderer& renderer, const Sequence& sequence, render::RenderOptions options,
                            render::RenderObserver& observer);

}  // namespace shotchain::exporting
