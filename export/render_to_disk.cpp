#include "export/render_to_disk.h"

#include <exception>

#include "export/frame_file_writer.h"
#include "export/png_frame.h"
#include "render/render_lock.h"

namespace shotchain::exporting {

RenderedToDisk renderToDisk(render::Renderer& renderer, const Sequence& sequence, render::RenderOptions options,
                            render::RenderObserver& observer) {
  if (!options.loadImage) options.loadImage = [](const std::filesystem::path& path) { return readPngFrame(path); };
  const render::RenderFolderLock lock(options.outputDirectory);  // until the movie and the timeline are written
  FrameFileWriter writer(options.outputDirectory, &observer);
  RenderedToDisk result;
  result.summary = renderer.render(sequence, options, writer);
  if (!result.summary.finished.completed) return result;
  try {
    result.outputs = finalizeOutputs(describeOutputs(sequence, result.summary, options.outputDirectory));
  } catch (const std::exception& error) {
    result.outputsError = error.what();
  }
  return result;
}

}  // namespace shotchain::exporting
