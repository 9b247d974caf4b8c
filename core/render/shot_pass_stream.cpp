// KV stream sampling of the shot pass: a block-causal DiT's KV cache carried from cut to cut.
#include <ATen/ATen.h>

#include "continuity/handoff.h"
#include "continuity/kv_stream.h"
#include "models/video_vae.h"
#include "render/frame_conversion.h"
#include "render/output_layout.h"
#include "render/shot_pass.h"
#include "render/shot_record.h"
#include "sampling/stream_sampler.h"
#include "sequence/continuity_modes.h"
#include "sequence/shot_rules.h"

namespace shotchain::render {
namespace {

bool promptChanged(const Shot& before, const Shot& after) {
  return before.prompt != after.prompt ||
         sampling::effectiveNegativePrompt(before.negativePrompt) != sampling::effectiveNegativePrompt(after.negativePrompt);
}

}  // namespace

void ShotPass::replayStream(const std::vector<int>& chain, int branches, bool split, const at::Tensor& previousLatent) {
  const models::VideoDiffusionModel& dit = residency_.dit();
  const std::int64_t spatial = models_.vae->geometry().spatialFactor;
  const Shot& root = sequence_.shots[static_cast<std::size_t>(chain.front())];
  stream_ = std::make_unique<continuity::KvStream>(dit, branches, root.height / spatial, root.width / spatial,
                                                   sequence_.settings.sampler.streamWindow.value_or(kDefaultStreamWindow),
                                                   dit.fpsConditioning(sequence_.settings.fps));
  for (std::size_t n = 0; n < chain.size(); ++n) {
    const int i = chain[n];
    const Shot& shot = sequence_.shots[static_cast<std::size_t>(i)];
    at::Tensor latent = n + 1 == chain.size() ? previousLatent : at::Tensor();
    if (!latent.defined()) {
      const std::filesystem::path dir = shotDirectory(options_.outputDirectory, i, shot.id);
      const std::optional<ShotTail> tail = readShotTail(dir, models_.device);
      if (!tail) throw std::runtime_error(dir.string() + ": the latents of shot " + std::to_string(i + 1) +
                                          " are needed to rebuild the stream's cache and could not be read");
      latent = tail->latent;
    }
    const at::Tensor& cond = promptContexts_.at(shot.prompt);
    const at::Tensor& uncond = promptContexts_.at(sampling::effectiveNegativePrompt(shot.negativePrompt));
    if (n > 0 && recaches(shot.continuity) && promptChanged(sequence_.shots[static_cast<std::size_t>(chain[n - 1])], shot))
      stream_->recache(cond, uncond, split);
    stream_->commit(latent, cond, uncond, split);
  }
}

std::string ShotPass::prepareStream(int index, const std::shared_ptr<PriorShot>& previous, int branches, bool split) {
  const Shot& shot = sequence_.shots[static_cast<std::size_t>(index)];
  const models::VideoDiffusionModel& dit = residency_.dit();
  if (!previous) {
    const std::int64_t spatial = models_.vae->geometry().spatialFactor;
    stream_ = std::make_unique<continuity::KvStream>(dit, branches, shot.height / spatial, shot.width / spatial,
                                                     sequence_.settings.sampler.streamWindow.value_or(kDefaultStreamWindow),
                                                     dit.fpsConditioning(sequence_.settings.fps));
    return "started";
  }
  std::string action;
  if (!stream_ || streamShot_ != previous->index || streamKey_ != previous->key || stream_->branches() != branches) {
    const std::vector<int> chain = streamChainBefore(sequence_, static_cast<std::size_t>(index));
    if (chain.empty() || chain.back() != previous->index)
      throw std::logic_error("stream: the shot handed off from is not the one before in the sequence");
    replayStream(chain, branches, split, *ring_.handoff(sequence_.shots[static_cast<std::size_t>(index)].continuity.tag));
    action = "rebuilt from " + std::to_string(chain.size()) + (chain.size() == 1 ? " shot, " : " shots, ");
  }
  stream_->bind(dit);
  const Shot& before = sequence_.shots[static_cast<std::size_t>(previous->index)];
  if (recaches(shot.continuity) && promptChanged(before, shot)) {
    stream_->recache(promptContexts_.at(shot.prompt), promptContexts_.at(sampling::effectiveNegativePrompt(shot.negativePrompt)), split);
    return action + "recached";
  }
  return action + "kept";
}

StreamedShot ShotPass::streamShot(int index, const std::shared_ptr<PriorShot>& previous,
                                  const continuity::Conditioning& conditioning, const sampling::SamplerOptions& sampler,
                                  const sampling::StepCallback& onStep, int frames) {
  const Shot& shot = sequence_.shots[static_cast<std::size_t>(index)];
  const auto start = Stopwatch::now();
  StreamedShot out;
  const int branches = sampling::streamBranches(sampler.guidance);
  out.figures.cache = prepareStream(index, previous, branches, sampler.splitGuidance);
  out.figures.recacheSeconds = secondsSince(start);
  continuity::KvStream& stream = *stream_;
  const std::int64_t chunk = stream.chunkFrames();
  if (conditioning.sampleShape[1] % chunk != 0)
    throw std::invalid_argument("shot " + std::to_string(index + 1) + " (" + shot.id + "): " +
                                std::to_string(conditioning.sampleShape[1]) + " latent frames to stream are not whole chunks of " +
                                std::to_string(chunk) + " (shots.frames)");

  // Frames are decoded chunk by chunk unless the plan decodes in tiles (a tile runs through every frame).
  const bool streamingDecode = !summary_.plan.tiledDecode;
  std::unique_ptr<models::VaeDecodeStream> decoder = streamingDecode ? models_.vae->openDecodeStream() : nullptr;
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

  const at::Tensor& cond = promptContexts_.at(shot.prompt);
  const at::Tensor& uncond = promptContexts_.at(sampling::effectiveNegativePrompt(shot.negativePrompt));
  auto onChunk = [&](const sampling::ChunkDone& done) {
    stream.committed(done.latent);
    if (decoder) {
      decode(done.latent);
      if (out.firstFrameSeconds == 0) out.firstFrameSeconds = secondsSince(start);
    }
    return !cancel_.load();
  };
  const sampling::ChunkDenoiser& inner = stream.denoiser();
  const sampling::ChunkDenoiser counted = [&](const at::Tensor& x, const at::Tensor& t, const at::Tensor& context,
                                              std::int64_t firstBranch, bool commit) {
    out.ditPasses += static_cast<int>(x.size(0));
    return inner(x, t, context, firstBranch, commit);
  };
  out.result = sampling::sampleStream(counted, conditioning.sampleShape, chunk, cond, uncond, sampler, onStep, onChunk,
                                      &cancel_);
  if (!kept.empty()) out.video = at::cat(kept, 1);
  out.figures.framesHeld = static_cast<int>(stream.cache().frames());
  out.figures.cacheBytes = stream.cache().bytes();
  out.figures.peakCacheBytes = stream.cache().peakBytes();
  out.figures.framesCommitted = static_cast<int>(stream.framesTaken());
  return out;
}

}  // namespace shotchain::render
