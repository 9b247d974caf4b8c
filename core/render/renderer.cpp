#include "render/renderer.h"

#include <atomic>
#include <map>
#include <mutex>
#include <set>

#include <ATen/ATen.h>

#include "io/mapped_file.h"
#include "memory/device_memory.h"
#include "memory/expert_residency.h"
#include "memory/memory_planner.h"
#include "memory/memory_probe.h"
#include "memory/residency_manager.h"
#include "models/model_loading.h"
#include "models/sequence_parallel.h"
#include "render/device_choice.h"
#include "render/model_context.h"
#include "render/output_layout.h"
#include "render/prompt_encoder.h"
#include "render/render_report.h"
#include "render/shot_folders.h"
#include "render/shot_key.h"
#include "render/shot_pass.h"
#include "render/shot_record.h"
#include "resolve/plan_request.h"
#include "resolve/resolve_sequence.h"
#include "sampling/sampler.h"
#include "sequence/validation.h"
#include "util/atomic_file.h"
#include "util/number_text.h"
#include "util/stopwatch.h"

namespace shotchain::render {
namespace {

void requireWritableFolder(const std::filesystem::path& out) {
  std::error_code error;
  std::filesystem::create_directories(out, error);
  if (error) throw RenderError("output", out.string() + ": cannot create the output folder: " + error.message());
  const std::filesystem::path probe = out / ".shotchain-write-test";
  try {
    util::writeFileAtomically(probe, "ok");
  } catch (const std::exception& e) {
    throw RenderError("output", out.string() + ": the output folder is not writable: " + e.what());
  }
  std::filesystem::remove(probe, error);
}

// Decoding shot N beside the sampling of N+1 needs the DiT's activations and the decode's at once.
bool overlapFits(const memory::MemoryPlan& plan) {
  if (plan.chosen != ResidencyPolicy::Pinned) return false;
  const std::uint64_t decode = plan.tiledDecode ? plan.vaeDecodeTiled : plan.vaeDecodeFull;
  const std::uint64_t both =
      plan.ditWeights + plan.vaeWeights + plan.ditActivationPeak + decode + plan.ringBufferBytes + plan.margin;
  return plan.limit == 0 || both <= plan.limit;
}

// Every file a render writes lies below <out>/shots/<NN>-<id>/frames/; refused when the longest such
// path (with room for a temporary suffix) would pass the system's path limit.
void requireShortEnoughPaths(const Sequence& sequence, const std::filesystem::path& out) {
  constexpr std::size_t kPathLimit = 4095, kTemporarySuffix = 32;
  for (std::size_t i = 0; i < sequence.shots.size(); ++i) {
    const std::filesystem::path deepest =
        framePath(shotDirectory(std::filesystem::absolute(out), static_cast<int>(i), sequence.shots[i].id),
                  sequence.shots[i].frames);
    if (deepest.string().size() + kTemporarySuffix > kPathLimit)
      throw RenderError(shotPath(i, "id"), deepest.string() + ": the path of this shot's files is longer than the " +
                                               std::to_string(kPathLimit) +
                                               "-byte limit (choose a shorter output folder)");
  }
}

// A shot in the range that hands off from (or anchors its colour to) a shot before the range needs
// that shot on disk, rendered with its current key: otherwise it would be rendered without its
// handoff and stored under a key that says it had one.
void requirePredecessorsOnDisk(const resolve::ResolvedSequence& resolved, const std::vector<std::string>& keys,
                               int first, int last, const std::filesystem::path& out) {
  auto onDisk = [&](int j) {
    const std::filesystem::path dir = shotDirectory(out, j, resolved.shots[static_cast<std::size_t>(j)].id);
    const std::optional<ShotRecord> record = readShotRecord(dir);
    return record && record->key == keys[static_cast<std::size_t>(j)] && shotFolderProblem(dir, *record, false).empty();
  };
  auto require = [&](int j, int i, const std::string& why) {
    if (j < 0 || j >= first || onDisk(j)) return;
    throw RenderError("shots", "shot " + std::to_string(j + 1) + " (" + resolved.shots[static_cast<std::size_t>(j)].id +
                                   ") is not rendered on disk with its current settings, and shot " +
                                   std::to_string(i + 1) + " " + why + ": render from shot " + std::to_string(j + 1) +
                                   " (--shots " + std::to_string(j + 1) + "-" + std::to_string(last + 1) +
                                   ") or render shot " + std::to_string(j + 1) + " first");
  };
  for (int i = first; i <= last; ++i) {
    const resolve::ResolvedShot& shot = resolved.shots[static_cast<std::size_t>(i)];
    if (!shot.enabled) continue;
    require(shot.predecessor, i,
            "hands off from it (continuity " + std::string(toString(shot.settings.mode)) + ", tag \"" +
                shot.settings.tag + "\")");
    require(shot.anchor, i, "anchors its colour to it");
    for (const int j : shot.streamChain) require(j, i, "streams on from it (its latents rebuild the KV cache)");
  }
}

memory::MemoryPlan planFor(const resolve::ResolvedSequence& resolved, const Sequence& sequence, c10::Device device,
                           ResidencyPolicy policy, std::optional<std::uint64_t> budget) {
  try {
    return memory::planMemory(
        resolve::planRequest(resolved, sequence.settings, {device.str(), std::nullopt, budget, policy}));
  } catch (const std::exception& e) {
    throw RenderError("model", e.what());
  }
}

// What a render settles before any work: the model files, the device, the shot keys and range.
struct Prepared {
  resolve::ResolvedSequence resolved;
  models::ModelFiles files;
  std::string fingerprint;
  c10::Device device = c10::kCPU;
  std::vector<std::string> keys;
  int first = 0;
  int last = -1;
  ResidencyPolicy policy = ResidencyPolicy::Auto;
  std::optional<std::uint64_t> budget;
};

}  // namespace

struct Renderer::Impl {
  // Published under probeMutex for probe() on other threads; the render thread holds its own
  // reference for the whole render.
  mutable std::mutex probeMutex;
  std::shared_ptr<memory::MemoryProbe> publishedProbe{memory::makeCpuMemoryProbe()};
  std::string probeDevice = "cpu";
  // The loaded model set, kept between renders; only the render thread touches it.
  std::unique_ptr<ModelContext> models;
  std::atomic<int> stop{static_cast<int>(StopRequest::None)};
  std::atomic<bool> cancelNow{false};

  Prepared prepare(const Sequence& sequence, const RenderOptions& options) {
    Prepared prepared;
    const std::shared_ptr<models::DitParallel> parallel = models::defaultDitParallel();
    const int ranks = parallel ? parallel->sequenceSize() * parallel->guidanceSize() : 1;
    prepared.resolved =
        resolve::resolveSequence(sequence, {options.sequenceDirectory, /*missingFilesAreErrors=*/true, ranks});
    const Diagnostics& problems = prepared.resolved.problems;
    for (const Diagnostic& d : problems)
      if (d.isError())
        throw RenderError(
            d.path, d.path.starts_with("model") ? d.message : "the sequence is not valid: " + formatAll(problems));
    prepared.device = chooseDevice(options.device);
    const int count = static_cast<int>(sequence.shots.size());
    prepared.first = options.firstShot;
    prepared.last = options.lastShot < 0 ? count - 1 : options.lastShot;
    if (prepared.first < 0 || prepared.last >= count || prepared.first > prepared.last)
      throw RenderError("shots", "the shot range " + std::to_string(prepared.first + 1) + "-" +
                                     std::to_string(prepared.last + 1) + " is not within 1-" + std::to_string(count));
    prepared.files = prepared.resolved.models.files;
    try {
      prepared.fingerprint = modelFingerprint(prepared.files);
    } catch (const std::exception& e) {
      throw RenderError("model", e.what());
    }
    prepared.keys = shotKeys(prepared.resolved, prepared.fingerprint);
    prepared.policy = options.policy.value_or(sequence.settings.policy);
    prepared.budget = options.budget ? options.budget : sequence.settings.memoryBudgetBytes;
    return prepared;
  }

  std::shared_ptr<memory::MemoryProbe> currentProbe() const {
    const std::lock_guard<std::mutex> lock(probeMutex);
    return publishedProbe;
  }

  // Once per render, on the render thread, before anything samples it.
  std::shared_ptr<memory::MemoryProbe> probeFor(c10::Device device) {
    if (device.is_cuda() && probeDevice != device.str()) {
      std::shared_ptr<memory::MemoryProbe> probe = memory::makeDeviceMemoryProbe(device.str());
      const std::lock_guard<std::mutex> lock(probeMutex);
      publishedProbe = probe;
      probeDevice = device.str();
    }
    return currentProbe();
  }

  // The DiT is loaded up front only when it stays resident; otherwise the residency manager loads it
  // at the first shot, after the text encoder has been released.
  // Models kept from an earlier render whose file was cut short meanwhile are read again; a file cut short while
  // it is read (since `mark`) fails the render.
  void ensureModels(const Prepared& prepared, bool withDit, std::size_t mark) {
    if (models && models->fingerprint == prepared.fingerprint && models->device == prepared.device &&
        io::cutShortProblem(SIZE_MAX).empty())
      return;
    models.reset();
    try {
      models = loadModelContext(prepared.resolved.models, prepared.device, withDit);
    } catch (const std::exception& e) {
      throw RenderError("model", e.what());
    }
    if (std::string problem = io::cutShortProblem(mark); !problem.empty()) {
      models.reset();
      throw RenderError("model", problem);
    }
  }
};

Renderer::Renderer() : impl_(std::make_unique<Impl>()) {}
Renderer::~Renderer() = default;

void Renderer::requestStop(StopRequest request) {
  impl_->stop.store(static_cast<int>(request));
  if (request == StopRequest::Now) impl_->cancelNow.store(true);
}

std::shared_ptr<memory::MemoryProbe> Renderer::probe() const { return impl_->currentProbe(); }

memory::MemoryPlan Renderer::plan(const Sequence& sequence, const RenderOptions& options) {
  const Prepared prepared = impl_->prepare(sequence, options);
  return planFor(prepared.resolved, sequence, prepared.device, prepared.policy, prepared.budget);
}

namespace {

// The plan is made and shown before any model loads; a plan that does not fit refuses the render.
RenderSummary planRender(const Sequence& sequence, const Prepared& prepared, RenderObserver& observer) {
  RenderSummary summary;
  summary.resolved = prepared.resolved;
  summary.plan = planFor(prepared.resolved, sequence, prepared.device, prepared.policy, prepared.budget);
  if (!summary.plan.fits) throw RenderError(prepared.budget ? "memory.budget" : "memory.policy", summary.plan.reason);
  observer.planReady(summary.plan);
  for (const std::string& note : summary.plan.notes) {
    const RenderWarning warning{-1, "continuity", note};
    summary.warnings.push_back(warning);
    observer.warning(warning);
  }
  return summary;
}

// The enabled shots of the range whose result on disk is current (re-used as they are). A folder that holds the
// current key but not what its record says it was rendered to (a frame or tail changed, missing, or a link) is
// rendered again, with a warning that says why.
std::set<int> currentOnDisk(const RenderOptions& options, const Prepared& prepared, RenderObserver& observer,
                            RenderSummary& summary) {
  std::set<int> reused;
  for (int i = prepared.first; i <= prepared.last; ++i) {
    const resolve::ResolvedShot& shot = prepared.resolved.shots[static_cast<std::size_t>(i)];
    if (!shot.enabled || !options.reuse) continue;
    const std::string& key = prepared.keys[static_cast<std::size_t>(i)];
    const std::filesystem::path dir = shotDirectory(options.outputDirectory, i, shot.id);
    const std::optional<ShotRecord> record = readShotRecord(dir);
    std::string problem;
    std::error_code error;
    if (record && record->key == key) {
      problem = shotFolderProblem(dir, *record, options.framesOnDisk);
      if (problem.empty()) reused.insert(i);
    } else if (!record && std::filesystem::exists(shotRecordPath(dir), error)) {
      problem = "shot.json cannot be read";
    } else if (!options.writesFiles) {  // rank 0 moves a re-ordered shot to its number (adoptMovedShots)
      if (const auto moved = findFinishedShot(options.outputDirectory, i, shot.id, key); moved && moved->key == key)
        reused.insert(i);
    }
    if (problem.empty()) continue;
    const RenderWarning warning{
        i, "damaged",
        "shot " + std::to_string(i + 1) + " (" + shot.id + ") on disk: " + problem + "; it is rendered again"};
    summary.warnings.push_back(warning);
    observer.warning(warning);
  }
  return reused;
}

// Every prompt of the shots to render (and of the stream shots a rebuilt cache replays) is encoded first, unless
// it was before (the embeddings kept on disk); the text encoder is loaded only for the others and released
// before the first DiT step.
void encodePrompts(const RenderOptions& options, const Prepared& prepared, const std::set<int>& reused,
                   memory::ResidencyManager& residency, RenderSummary& summary, ShotPass& pass) {
  const auto start = util::Stopwatch::now();
  std::set<std::string> prompts = promptsToEncode(prepared.resolved, prepared.first, prepared.last, reused);
  const PromptEmbeddings cache = promptEmbeddingsFor(options, prepared.resolved.models, prepared.device);
  for (auto it = prompts.begin(); it != prompts.end();)
    if (std::optional<at::Tensor> kept = cache.find(*it)) {
      pass.promptContexts()[*it] = std::move(*kept);
      ++summary.promptsFromCache;
      it = prompts.erase(it);
    } else {
      ++it;
    }
  if (!prompts.empty()) {
    PromptEncoder encoder(prepared.files, prepared.device);
    encoder.load();
    ++summary.textEncoderLoads;
    residency.reserve("text encoder", summary.plan.textEncoderPeak);
    for (const std::string& prompt : prompts) {
      const at::Tensor embedding = encoder.encode(prompt);
      cache.store(prompt, embedding);
      pass.promptContexts()[prompt] = embedding;
      ++summary.promptsEncoded;
    }
    encoder.release();
    residency.release("text encoder");
    cache.prune(options.promptEmbeddingBytes);
  }
  summary.textEncodeSeconds = util::secondsSince(start);
}

// What a shot whose sample went bad was sampled with, for its failure: its LoRAs and guidance.
std::string appliedToSampling(const resolve::ResolvedShot& shot) {
  std::string out;
  for (const resolve::ResolvedLora& lora : shot.loras)
    out += (out.empty() ? "LoRA " : ", LoRA ") + std::filesystem::path(lora.file).filename().string() + " at " +
           util::numberText(lora.strength);
  return out + (out.empty() ? "" : ", ") + "guidance " + util::numberText(shot.guidance) +
         (shot.loras.empty() ? " (no LoRA)" : "");
}

// Renders or re-uses every enabled shot of the range in order, until a stop request, a cancel or a
// failure (which is reported and ends the loop). Returns whether a shot failed.
bool renderShots(const Prepared& prepared, const std::set<int>& reused, memory::MemoryProbe& probe,
                 const std::atomic<int>& stop, RenderObserver& observer, RenderSummary& summary, ShotPass& pass) {
  const std::vector<resolve::ResolvedShot>& shots = prepared.resolved.shots;
  const int count = static_cast<int>(shots.size());
  int lastEnabled = prepared.last;
  while (lastEnabled > prepared.first && !shots[static_cast<std::size_t>(lastEnabled)].enabled) --lastEnabled;
  for (int i = prepared.first; i <= prepared.last; ++i) {
    const resolve::ResolvedShot& shot = shots[static_cast<std::size_t>(i)];
    if (!shot.enabled) continue;
    if (stop.load() != static_cast<int>(StopRequest::None)) {
      summary.finished.cancelled = true;
      return false;
    }
    const memory::MemorySample sample = probe.sample();
    summary.memory.emplace_back(i, sample);
    observer.memorySampled(i, sample);
    try {
      const std::string& key = prepared.keys[static_cast<std::size_t>(i)];
      if (reused.count(i)) {
        pass.reuse(i, key, count);
        ++summary.finished.shotsReused;
      } else if (pass.render(i, key, count, i == lastEnabled).cancelled) {
        summary.finished.cancelled = true;
        return false;
      } else {
        ++summary.finished.shotsRendered;
      }
    } catch (const EarlierShotFailed& e) {
      const RenderFailure failure{e.index(), e.what()};
      observer.failed(failure);
      summary.warnings.push_back({e.index(), "failure", failure.message});
      return true;
    } catch (const std::exception& e) {
      const bool poisoned = dynamic_cast<const sampling::NonFiniteSample*>(&e) != nullptr;
      const std::string prefix = "shot " + std::to_string(i + 1) + " (" + shot.id + "): ";
      const std::string what = e.what();
      const RenderFailure failure{i, (what.starts_with(prefix) ? what : prefix + what) +
                                         (poisoned ? "; applied: " + appliedToSampling(shot) : std::string())};
      observer.failed(failure);
      summary.warnings.push_back({i, "failure", failure.message});
      return true;
    }
  }
  return false;
}

// After a range render: every enabled shot outside the range whose frames on disk were made for other
// settings than it has now (its own, or a shot it continues from changed). The MP4 assembled from
// disk would show them as they were, so each is a warning that says which shots to render.
void warnStaleAfterRange(const Sequence& sequence, const RenderOptions& options, const Prepared& prepared,
                         RenderObserver& observer, RenderSummary& summary) {
  std::vector<int> stale;
  for (int i = 0; i < static_cast<int>(sequence.shots.size()); ++i) {
    const Shot& shot = sequence.shots[static_cast<std::size_t>(i)];
    if (!shot.enabled || (i >= prepared.first && i <= prepared.last)) continue;
    const std::optional<ShotRecord> record = readShotRecord(shotDirectory(options.outputDirectory, i, shot.id));
    if (record && record->key != prepared.keys[static_cast<std::size_t>(i)]) stale.push_back(i);
  }
  if (stale.empty()) return;
  std::string names;
  for (const int i : stale)
    names += (names.empty() ? "" : ", ") + std::to_string(i + 1) + " (" +
             sequence.shots[static_cast<std::size_t>(i)].id + ")";
  const bool several = stale.size() > 1;
  const RenderWarning warning{stale.front(), "stale",
                              std::string(several ? "shots " : "shot ") + names + " on disk " +
                                  (several ? "are" : "is") + " out of date (rendered before a change to " +
                                  (several ? "them" : "it") + " or to a shot it continues from); sequence.mp4 shows " +
                                  (several ? "them" : "it") + " as before: render " +
                                  std::to_string(stale.front() + 1) + "-" + std::to_string(stale.back() + 1) +
                                  " (or the whole sequence with --resume) to bring the movie up to date"};
  // A range from stale.front() to stale.back() may include current shots; --resume re-uses those.
  summary.warnings.push_back(warning);
  observer.warning(warning);
}

// The last decode delivered, the residency figures, the last memory sample and the report.
void finishRender(const Sequence& sequence, const RenderOptions& options, bool failed,
                  util::Stopwatch::time_point start, ShotPass& pass, memory::ResidencyManager& residency,
                  memory::MemoryProbe& probe, RenderObserver& observer, RenderSummary& summary) {
  try {
    pass.finishPending();
  } catch (const EarlierShotFailed& e) {
    failed = true;
    const RenderFailure failure{e.index(), e.what()};
    observer.failed(failure);
    summary.warnings.push_back({e.index(), "failure", failure.message});
  } catch (const std::exception& e) {
    failed = true;
    const RenderFailure failure{-1, e.what()};
    observer.failed(failure);
    summary.warnings.push_back({-1, "failure", failure.message});
  }
  residency.finish();
  summary.ditLoads = residency.stats().loads;
  summary.ditLoadSeconds = residency.stats().loadSeconds;
  summary.ditOffloads = residency.stats().offloads;
  summary.reservedPeak = residency.peakReserved();
  const memory::MemorySample endSample = probe.sample();
  summary.memory.emplace_back(-1, endSample);
  observer.memorySampled(-1, endSample);
  summary.finished.completed = !failed && !summary.finished.cancelled;
  summary.finished.seconds = util::secondsSince(start);
  summary.finished.outputDirectory = options.outputDirectory.string();
  if (options.writesFiles) writeRenderReport(options.outputDirectory, sequence, summary);
  observer.sequenceFinished(summary.finished);
}

}  // namespace

RenderSummary Renderer::render(const Sequence& sequence, const RenderOptions& options, RenderObserver& observer) {
  Impl& impl = *impl_;
  const auto renderStart = util::Stopwatch::now();
  // Models read from a file that was cut short during this render are not kept for the next one.
  struct DropCutShortModels {
    Impl& impl;
    std::size_t mark = io::cutShortMark();
    ~DropCutShortModels() {
      if (!io::cutShortProblem(mark).empty()) impl.models.reset();
    }
  } dropCutShortModels{impl};
  impl.stop.store(static_cast<int>(StopRequest::None));
  impl.cancelNow.store(false);

  const Prepared prepared = impl.prepare(sequence, options);
  const std::shared_ptr<memory::MemoryProbe> probe = impl.probeFor(prepared.device);
  requireShortEnoughPaths(sequence, options.outputDirectory);
  if (options.writesFiles && options.reuse) {
    try {
      adoptMovedShots(options.outputDirectory, sequence, prepared.keys);
    } catch (const std::filesystem::filesystem_error&) {
      // a folder that cannot be moved is rendered again
    }
  }
  requirePredecessorsOnDisk(prepared.resolved, prepared.keys, prepared.first, prepared.last, options.outputDirectory);
  if (options.writesFiles) requireWritableFolder(options.outputDirectory);
  RenderSummary summary = planRender(sequence, prepared, observer);

  const auto loadStart = util::Stopwatch::now();
  summary.allocatorTuning = memory::applyAllocatorTuning(sequence.settings.allocatorTuning).message;
  impl.ensureModels(prepared, summary.plan.chosen == ResidencyPolicy::Pinned, dropCutShortModels.mark);
  summary.modelLoadSeconds = util::secondsSince(loadStart);
  std::optional<memory::ResidencyManager> residency;
  try {
    residency.emplace(summary.plan, *probe, *impl.models->dit);
  } catch (const memory::BudgetError& error) {
    throw RenderError(prepared.budget ? "memory.budget" : "memory.policy", error.what());
  }
  std::optional<memory::ExpertResidencyManager> experts;
  if (impl.models->ditHighNoise) {
    try {
      if (summary.plan.expertsChosen == shotchain::ExpertResidency::Resident)
        residency->reserve("high-noise expert", summary.plan.highNoiseExpertWeights);
    } catch (const memory::BudgetError& error) {
      throw RenderError(prepared.budget ? "memory.budget" : "memory.policy", error.what());
    }
    experts.emplace(summary.plan.expertsChosen, *probe, *impl.models->dit, *impl.models->ditHighNoise);
  }
  summary.decodeOverlapped = options.overlapDecode && overlapFits(summary.plan);
  ShotPass pass(sequence, prepared.resolved, options, *impl.models, observer, impl.cancelNow, summary, *residency,
                summary.decodeOverlapped);
  if (experts) pass.setExperts(&*experts);

  const std::set<int> reused = currentOnDisk(options, prepared, observer, summary);
  pass.loadPredecessorsBefore(prepared.first, prepared.keys);  // shots before the range that hand off into it
  encodePrompts(options, prepared, reused, *residency, summary, pass);
  const bool failed = renderShots(prepared, reused, *probe, impl.stop, observer, summary, pass);
  if (options.writesFiles && !failed && !summary.finished.cancelled)
    warnStaleAfterRange(sequence, options, prepared, observer, summary);
  finishRender(sequence, options, failed, renderStart, pass, *residency, *probe, observer, summary);
  return summary;
}

}  // namespace shotchain::render
