#include "render/prompt_precompute.h"

#include "render/device_choice.h"
#include "render/prompt_encoder.h"
#include "resolve/resolve_sequence.h"
#include "util/stopwatch.h"

namespace shotchain::render {
namespace {

PrecomputedPrompt whereUsed(const resolve::ResolvedSequence& resolved, const std::string& prompt) {
  for (std::size_t i = 0; i < resolved.shots.size(); ++i) {
    const resolve::ResolvedShot& shot = resolved.shots[i];
    if (shot.enabled && shot.prompt == prompt) return {static_cast<int>(i), false};
  }
  for (std::size_t i = 0; i < resolved.shots.size(); ++i)
    if (resolved.shots[i].enabled && resolved.shots[i].uncondPrompt == prompt) return {static_cast<int>(i), true};
  return {};
}

}  // namespace

void PromptEncoderDeleter::operator()(PromptEncoder* encoder) const { delete encoder; }

PromptPrecompute precomputePrompts(const Sequence& sequence, const RenderOptions& options, KeptPromptEncoder& encoder,
                                   const std::function<bool()>& stop) {
  const auto start = util::Stopwatch::now();
  PromptPrecompute result;
  if (!options.promptEmbeddings || sequence.shots.empty()) return result;
  const resolve::ResolvedSequence resolved =
      resolve::resolveSequence(sequence, {options.sequenceDirectory, /*missingFilesAreErrors=*/true});
  for (const Diagnostic& d : resolved.problems)
    if (d.isError() && d.path.starts_with("model")) throw RenderError(d.path, d.message);
  const c10::Device device = chooseDevice(options.device);
  const PromptEmbeddings cache = promptEmbeddingsFor(options, resolved.models, device);
  if (encoder && !encoder->encodesFor(resolved.models.files, device)) encoder.reset();
  const int loadsBefore = encoder ? encoder->loads() : 0;
  for (const std::string& prompt : promptsToEncode(resolved, 0, static_cast<int>(resolved.shots.size()) - 1)) {
    if (cache.find(prompt)) {
      ++result.fromCache;
      continue;
    }
    if (stop && stop()) {
      result.stopped = true;
      break;
    }
    if (!encoder) encoder.reset(new PromptEncoder(resolved.models.files, device));
    cache.store(prompt, encoder->encode(prompt));
    result.encoded.push_back(whereUsed(resolved, prompt));
  }
  if (encoder) result.loads = encoder->loads() - loadsBefore;
  if (!result.encoded.empty()) cache.prune(options.promptEmbeddingBytes);
  result.seconds = util::secondsSince(start);
  return result;
}

}  // namespace shotchain::render
