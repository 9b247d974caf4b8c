#include "render/stream_session.h"

#include <ATen/ATen.h>

#include "continuity/kv_stream.h"
#include "models/video_diffusion_model.h"
#include "models/video_vae.h"
#include "render/frame_conversion.h"
#include "render/output_layout.h"
#include "render/shot_record.h"
#include "sampling/stream_sampler.h"
#include "util/stopwatch.h"

namespace shotchain::render {
namespace {

bool promptChanged(const resolve::ResolvedShot& before, const resolve::ResolvedShot& after) {
  return before.prompt != after.prompt || before.uncondPrompt != after.uncondPrompt;
}

}  // namespace

StreamSession::StreamSession(const resolve::ResolvedSequence& resolved, std::filesystem::path outputDirectory,
                             RenderObserver& observer, const std::atomic<bool>& cancel)
    : resolved_(resolved), outputDirectory_(std::move(outputDirectory)), observer_(observer), cancel_(cancel) {}

StreamSession::~StreamSession() = default;

const at::Tensor& StreamSession::uncond(const resolve::ResolvedShot& shot, const Models& models) const {
  return models.prompts.at(shot.uncondPrompt);
}

void StreamSession::replay(const std::vector<int>& chain, int branches, bool split, const at::Tensor& previousLatent,
                           const Models& models) {
  const resolve::ResolvedShot& root = resolved_.shots[static_cast<std::size_t>(chain.front())];
  stream_ = std::make_unique<continuity::KvStream>(models.dit, branches, root.latentHeight, root.latentWidth,
                                                   resolved_.streamWindow, models.dit.fpsConditioning(resolved_.fps));
  for (std::size_t n = 0; n < chain.size(); ++n) {
    const resolve::ResolvedShot& shot = resolved_.shots[static_cast<std::size_t>(chain[n])];
    at::Tensor latent = n + 1 == chain.size() ? previousLatent : at::Tensor();
    if (!latent.defined()) {
      const std::filesystem::path dir = shotDirectory(outputDirectory_, chain[n], shot.id);
      const std::optional<ShotTail> tail = readShotTail(dir, models.device);
      if (!tail)
        throw std::runtime_error(dir.string() + ": the latents of shot " + std::to_string(chain[n] + 1) +
                                 " are needed to rebuild the stream's cache and could not be read");
      latent = tail->latent;
    }
    const at::Tensor& cond = models.prompts.at(shot.prompt);
    if (n > 0 && shot.recache && promptChanged(resolved_.shots[static_cast<std::size_t>(chain[n - 1])], shot))
      stream_->recache(cond, uncond(shot, models), split);
    stream_->commit(latent, cond, uncond(shot, models), split);
  }
}

std::string StreamSession::prepare(const resolve::ResolvedShot& shot, const std::shared_ptr<PriorShot>& previous,
                                   const at::Tensor& previousLatent, int branches, bool split, const Models& models) {
  if (!previous) {
    stream_ = std::make_unique<continuity::KvStream>(models.dit, branches, shot.latentHeight, shot.latentWidth,
                                                     resolved_.streamWindow, models.dit.fpsConditioning(resolved_.fps));
    return "started";
  }
  std::string action;
  if (!stream_ || shot_ != previous->index || key_ != previous->key || stream_->branches() != branches) {
    if (shot.streamChain.empty() || shot.streamChain.back() != previous->index)
      throw std::logic_error("stream: the shot handed off from is not the one before in the sequence");
    replay(shot.streamChain, branches, split, previousLatent, models);
    action = "rebuilt from " + std::to_string(shot.streamChain.size()) +
             (shot.streamChain.size() == 1 ? " shot, " : " shots, ");
  }
  stream_->bind(models.dit);
  const resolve::ResolvedShot& before = resolved_.shots[static_cast<std::size_t>(previous->index)];
  if (shot.recache && promptChanged(before, shot)) {
    stream_->recache(models.prompts.at(shot.prompt), uncond(shot, models), split);
    return action + "recached";
  }
  return action + "kept";
}

StreamedShot StreamSession::sample(const resolve::ResolvedShot& shot, const std::shared_ptr<PriorShot>& previous,
                                   const at::Tensor& previousLatent, const continuity::Conditioning& conditioning,
                                   const sampling::SamplerOptions& sampler, const sampling::StepCallback& onStep,
                                   int frames, bool tiledDecode, const Models& models) {
  const int index = static_cast<int>(shot.index);
  const auto start = util::Stopwatch::now();
  StreamedShot out;
  const int branches = sampling::streamBranches(sampler.guidance);
  out.figures.cache = prepare(shot, previous, previousLatent, branches, sampler.splitGuidance, models);
  out.figures.recacheSeconds = util::secondsSince(start);
  continuity::KvStream& stream = *stream_;
  const std::int64_t chunk = stream.chunkFrames();
  if (conditioning.sampleShape[1] % chunk != 0)
    throw std::invalid_argument(
        "shot " + std::to_string(index + 1) + " (" + shot.id + "): " + std::to_string(conditioning.sampleShape[1]) +
        " latent frames to stream are not whole chunks of " + std::to_string(chunk) + " (shots.frames)");

  // Frames are decoded chunk by chunk unless the plan decodes in tiles (a tile runs through every frame).
  std::unique_ptr<models::VaeDecodeStream> decoder = tiledDecode ? nullptr : models.vae.openDecodeStream();
  std::vector<at::Tensor> kept;
  std::int64_t toDrop = conditioning.dropPixelFrames;
  auto decode = [&](const at::Tensor& latents) {
    for (std::int64_t f = 0; f < latents.size(1); ++f) {
      const at::Tensor pixels = decoder->push(latents.narrow(1, f, 1));
      const std::int64_t n = pixels.size(1), skip = std::min(toDrop, n);
      toDrop -= skip;
      if (skip == n) continue;
      const at::Tensor keep = pixels.narrow(1, skip, n - skip).to(at::kCPU);
      kept.push_back(keep);
      FramesDecoded event;
      event.shotIndex = index;
      event.firstFrame = out.framesWritten;
      event.shotFrames = frames;
      event.frames = videoToFrames(keep);
      out.framesWritten += static_cast<int>(event.frames.size());
      observer_.framesDecoded(event);
    }
  };
  if (decoder && conditioning.decodePrefix.defined()) decode(conditioning.decodePrefix);

  auto onChunk = [&](const sampling::ChunkDone& done) {
    stream.committed(done.latent);
    if (decoder) {
      decode(done.latent);
      if (out.firstFrameSeconds == 0) out.firstFrameSeconds = util::secondsSince(start);
    }
    return !cancel_.load();
  };
  const sampling::ChunkDenoiser& inner = stream.denoiser();
  const sampling::ChunkDenoiser counted = [&](const at::Tensor& x, const at::Tensor& t, const at::Tensor& context,
                                              std::int64_t firstBranch, bool commit) {
    out.ditPasses += static_cast<int>(x.size(0));
    return inner(x, t, context, firstBranch, commit);
  };
  out.result = sampling::sampleStream(counted, conditioning.sampleShape, chunk, models.prompts.at(shot.prompt),
                                      uncond(shot, models), sampler, onStep, onChunk, &cancel_);
  if (!kept.empty()) out.video = at::cat(kept, 1);
  out.figures.framesHeld = static_cast<int>(stream.cache().frames());
  out.figures.cacheBytes = stream.cache().bytes();
  out.figures.peakCacheBytes = stream.cache().peakBytes();
  out.figures.framesCommitted = static_cast<int>(stream.framesTaken());
  return out;
}

void StreamSession::ended(int index, const std::string& key) {
  shot_ = index;
  key_ = key;
}

void StreamSession::drop() { stream_.reset(); }

}  // namespace shotchain::render
