#include "cli/render_ranks.h"

#include <csignal>
#include <cstdio>

#include "export/png_frame.h"

namespace shotchain::cli {
namespace {

// What a follower rank says: one line per shot, and why it failed.
class FollowerLog final : public render::RenderObserver {
 public:
  explicit FollowerLog(const DistributedSession& session) : session_(session) {}
  void shotFinished(const render::ShotFinished& shot) override {
    std::fprintf(stderr, "%sshot %d (%s) done\n", session_.prefix().c_str(), shot.index + 1, shot.id.c_str());
  }
  void failed(const render::RenderFailure& failure) override {
    std::fprintf(stderr, "%s%s\n", session_.prefix().c_str(), failure.message.c_str());
  }

 private:
  const DistributedSession& session_;
};

}  // namespace

int renderOnFollowerRank(const Sequence& sequence, render::RenderOptions options, DistributedSession& session) {
  std::signal(SIGINT, SIG_IGN);  // Ctrl+C reaches rank 0 too, which decides when the render stops
  options.writesFiles = false;
  options.previews = false;
  if (!options.loadImage)
    options.loadImage = [](const std::filesystem::path& path) { return exporting::readPngFrame(path); };
  FollowerLog log(session);
  render::Renderer renderer;
  int status = 0;
  try {
    const render::RenderSummary summary = renderer.render(sequence, options, log);
    status = summary.finished.completed ? 0 : summary.finished.cancelled ? 5 : 1;
  } catch (const render::RenderError& error) {
    std::fprintf(stderr, "shotchain render: %s%s: %s\n", session.prefix().c_str(), error.field().c_str(), error.what());
    status = 4;
  }
  return finishDistributed(session, status);
}

}  // namespace shotchain::cli
