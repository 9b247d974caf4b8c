// Every shot of every sequence in workflows/ and of a set of edge documents, resolved once: the memory plan's
// request, the shot keys and the shot pass (what a real render on tiny models reports and writes) consume exactly
// the resolved values.
#include <QtTest/qtestassert.h>
#include <QTemporaryDir>
#include <QTest>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "export_test_frames.h"
#include "golden_model_facts.h"
#include "io/safetensors_writer.h"
#include "io/weight_set.h"
#include "render/renderer.h"
#include "render/resolved_shot_json.h"
#include "render/shot_record.h"
#include "resolve/plan_request.h"
#include "resolve/resolve_sequence.h"
#include "runtime/torch_runtime.h"
#include "sequence/sequence_io.h"
#include "test_registry.h"
#include "test_support.h"
#include "tiny_model_set.h"

using namespace shotchain;
using namespace shotchain::testing;
namespace fs = std::filesystem;

namespace {

struct Recorded : render::RenderObserver {
  std::vector<render::ShotStarted> started;
  std::vector<render::ShotFinished> finished;
  std::vector<std::string> failures;
  void shotStarted(const render::ShotStarted& s) override { started.push_back(s); }
  void shotFinished(const render::ShotFinished& s) override { finished.push_back(s); }
  void failed(const render::RenderFailure& f) override { failures.push_back(f.message); }
};

// The plan's request holds each enabled shot as resolved.
void checkPlan(const resolve::ResolvedSequence& resolved, const memory::PlanRequest& request, const std::string& name) {
  std::size_t k = 0;
  for (const resolve::ResolvedShot& shot : resolved.shots) {
    if (!shot.enabled) continue;
    QVERIFY2(k < request.shots.size(), name.c_str());
    const memory::PlanShot& planned = request.shots[k++];
    QCOMPARE(planned.channels, std::int64_t{shot.latentChannels});
    QCOMPARE(planned.frames, std::int64_t{shot.sampledLatentFrames});
    QCOMPARE(planned.height, std::int64_t{shot.latentHeight});
    QCOMPARE(planned.width, std::int64_t{shot.latentWidth});
    QCOMPARE(planned.decodePrefixFrames, std::int64_t{shot.continuity.decodePrefixLatents});
    QCOMPARE(planned.branches, shot.branches);
    QCOMPARE(planned.stepCacheTensors, shot.cache.applies ? shot.cache.residualTensors : 0);
    std::uint64_t elements = 0;
    for (const resolve::ResolvedLora& lora : shot.loras) elements += lora.patchedElements;
    QCOMPARE(planned.loraElements, elements);
    QCOMPARE(planned.expertRuns, shot.experts ? shot.experts->runs : std::vector<int>{});
  }
  QCOMPARE(k, request.shots.size());
}

// What the render reported of each shot is what was resolved for it.
void checkRender(const resolve::ResolvedSequence& resolved, const Recorded& events, const fs::path& out) {
  QVERIFY2(events.failures.empty(), events.failures.empty() ? "" : events.failures.front().c_str());
  QVERIFY(!events.finished.empty());
  const std::vector<std::string> keys = render::shotKeys(resolved, "model");
  for (const render::ShotStarted& started : events.started) {
    const resolve::ResolvedShot& shot = resolved.shots[static_cast<std::size_t>(started.index)];
    QCOMPARE(started.steps, shot.steps);
    QCOMPARE(started.frames, shot.outputFrames);
  }
  for (const render::ShotFinished& finished : events.finished) {
    const resolve::ResolvedShot& shot = resolved.shots[static_cast<std::size_t>(finished.index)];
    QCOMPARE(finished.framesWritten, shot.outputFrames);
    QCOMPARE(finished.cache.has_value(), shot.cache.policy != StepCachePolicy::Off);
    if (finished.cache) {
      QCOMPARE(finished.cache->policy, std::string(toString(shot.cache.policy)));
      QCOMPARE(finished.cache->threshold, shot.cache.threshold);
      QCOMPARE(finished.cache->off, shot.cache.off);
      QCOMPARE(finished.cache->computedPasses + finished.cache->skippedPasses > 0, shot.cache.applies);
    }
    QCOMPARE(finished.fewStep.has_value(), shot.fewStep.has_value());
    if (finished.fewStep) QCOMPARE(finished.fewStep->steps, shot.fewStep->steps);
    QCOMPARE(finished.loras.has_value(), !shot.loras.empty());
    if (finished.loras) {
      QCOMPARE(finished.loras->files.size(), shot.loras.size());
      for (std::size_t i = 0; i < shot.loras.size(); ++i) {
        QVERIFY(finished.loras->files[i].starts_with(shot.loras[i].file));
        QCOMPARE(finished.loras->strengths[i], shot.loras[i].strength);
      }
    }
    if (shot.experts) {
      QVERIFY(finished.experts.has_value());
      QCOMPARE(finished.experts->boundary, shot.experts->boundary);
      std::vector<int> runs;
      for (const int expert : finished.experts->experts)
        if (runs.empty() || runs.back() != expert) runs.push_back(expert);
      QCOMPARE(runs, shot.experts->runs);
      for (std::size_t i = 0; i < finished.experts->experts.size(); ++i)
        QCOMPARE(finished.experts->guidances[i],
                 finished.experts->experts[i] ? shot.experts->highGuidance : shot.guidance);
    }
    if (!shot.imageCondition.empty()) QCOMPARE(finished.conditionedOn, shot.imageCondition);
    // The record on disk holds the key the resolved shot gives (the fingerprint aside, it is the same digest).
    const std::optional<render::ShotRecord> record =
        render::readShotRecord(out / "shots" / fs::path(finished.directory).filename());
    QVERIFY(record.has_value());
    QCOMPARE(record->framesWritten, shot.outputFrames);
    // shot.json and report.json say what the shot was rendered with: the resolved shot, written once.
    const nlohmann::ordered_json written = render::resolvedShotToJson(shot);
    QCOMPARE(QString::fromStdString(record->resolvedJson), QString::fromStdString(written.dump()));
    QCOMPARE(written["steps"].get<int>(), shot.steps);
    QCOMPARE(written["negative_prompt_used"].get<std::string>(), shot.uncondPrompt);
    QCOMPARE(written["cache"]["applies"].get<bool>(), shot.cache.applies);
  }
  const nlohmann::ordered_json report = nlohmann::ordered_json::parse(readFile(out / "report.json"));
  QCOMPARE(report["shots"].size(), events.finished.size());
  for (const nlohmann::ordered_json& shot : report["shots"])
    QCOMPARE(
        QString::fromStdString(shot["resolved"].dump()),
        QString::fromStdString(render::resolvedShotToJson(resolved.shots[shot["index"].get<std::size_t>()]).dump()));
  QCOMPARE(keys.size(), resolved.shots.size());
}

}  // namespace

class ResolvedShots : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  fs::path root() const { return dir_.path().toStdString(); }
  std::optional<TinyModelSet> plain_, df_, causal_, ti2v_;

  // A UMT5 file that carries its tokenizer, as ComfyUI's do.
  void writeEncoderWithTokenizer(const TinyModelSet& set, const fs::path& to) const {
    const io::WeightSet weights = io::WeightSet::open(set.textEncoder);
    io::NamedTensors tensors;
    for (const io::WeightInfo& info : weights.weights())
      tensors.emplace_back(info.name, weights.load(info.name, at::kFloat));
    const std::string bytes = readFile(set.tokenizer);
    tensors.emplace_back("spiece_model", at::tensor(std::vector<std::uint8_t>(bytes.begin(), bytes.end())));
    io::saveSafetensors(to, tensors);
  }

  // A models folder in ComfyUI's layout with files of the workflow's family under the names it gives.
  void standIn(const fs::path& folder, const Sequence& sequence, const fs::path& dit, const fs::path& vae) const {
    const ModelSet& m = sequence.settings.model;
    for (const auto& [name, from] : {std::pair{m.dit, dit}, std::pair{m.vae, vae}}) {
      fs::create_directories((folder / name).parent_path());
      fs::copy_file(from, folder / name, fs::copy_options::overwrite_existing);
    }
    fs::create_directories((folder / m.textEncoder).parent_path());
    writeEncoderWithTokenizer(*plain_, folder / m.textEncoder);
  }

  Sequence load(const fs::path& file) const {
    const LoadResult loaded = loadSequenceFile(file);
    QTEST_ASSERT(loaded.ok());
    return *loaded.sequence;
  }

  // Renders on the CPU into `out`; the events recorded.
  Recorded render(const Sequence& s, const fs::path& sequenceDirectory, const fs::path& out) const {
    render::RenderOptions options;
    options.sequenceDirectory = sequenceDirectory;
    options.outputDirectory = out;
    options.framesOnDisk = false;
    options.previews = false;
    options.loadImage = [](const fs::path&) { return syntheticFrame(64, 64, 5); };
    Recorded events;
    render::Renderer renderer;
    const render::RenderSummary summary = renderer.render(s, options, events);
    if (!summary.finished.completed && events.failures.empty()) events.failures.push_back("did not complete");
    return events;
  }

  // The edge documents: every continuity mode, the sampler's variants, caches, LoRAs, experts, streams and
  // image-to-video on tiny models, each with its own model set.
  std::vector<std::pair<std::string, Sequence>> edgeDocuments() const {
    std::vector<std::pair<std::string, Sequence>> out;
    auto base = [](const TinyModelSet& set) {
      Sequence s;
      s.settings.model = set.modelSet();
      s.settings.sampler.steps = 4;
      s.settings.policy = ResidencyPolicy::Pinned;
      return s;
    };
    Sequence modes = base(*plain_);
    modes.shots = {tinyShot("a", 1), tinyShot("b", 2, ContinuityMode::Latent),
                   tinyShot("c", 3, ContinuityMode::LatentOverlap), tinyShot("d", 4, ContinuityMode::VaeRoundtrip),
                   tinyShot("e", 5, ContinuityMode::Blend)};
    modes.shots[1].steps = 3;
    modes.shots[1].guidance = 1.0;
    modes.shots[2].shift = 7.0;
    modes.shots[3].enabled = false;
    modes.shots[4].continuity.fallbackImage = (root() / "fallback.png").string();
    modes.shots[4].continuity.anchorColour = true;
    out.emplace_back("modes", modes);

    Sequence cached = base(*plain_);
    cached.settings.sampler.steps = 8;
    cached.settings.sampler.cache.policy = StepCachePolicy::TeaCache;
    cached.shots = {tinyShot("a", 1), tinyShot("b", 2, ContinuityMode::Latent),
                    tinyShot("c", 3, ContinuityMode::Latent)};
    cached.shots[1].cache = StepCacheSettings{StepCachePolicy::FirstBlock, 0.2, {}, {}};
    cached.shots[2].cache =
        StepCacheSettings{StepCachePolicy::MagCache, {}, {}, {}};  // no numbers for a tiny model: off
    out.emplace_back("cache", cached);

    Sequence fewStep = base(*plain_);
    fewStep.settings.sampler.guidance = 1.0;
    fewStep.settings.sampler.fewStep = FewStepSettings{{1000, 750, 500, 250}, DistilledUpdate::Euler, {}};
    fewStep.settings.sampler.cache.policy = StepCachePolicy::EasyCache;  // off: a few-step schedule computes every step
    fewStep.shots = {tinyShot("a", 1), tinyShot("b", 2, ContinuityMode::Latent)};
    fewStep.shots[1].fewStep = FewStepSettings{{1000, 500}, DistilledUpdate::Renoise, {}};
    fewStep.shots[1].steps = 9;  // not used: the few-step schedule gives the steps
    out.emplace_back("few-step", fewStep);

    Sequence loras = base(*plain_);
    loras.settings.loras = {LoraRef{(root() / "style.safetensors").string(), 0.8, {}, {}}};
    loras.shots = {tinyShot("a", 1), tinyShot("b", 2, ContinuityMode::Latent),
                   tinyShot("c", 3, ContinuityMode::Latent)};
    loras.shots[1].loras = std::vector<LoraRef>{};
    loras.shots[2].loras = std::vector<LoraRef>{LoraRef{(root() / "style.safetensors").string(), 1.5, {}, {}}};
    out.emplace_back("loras", loras);

    Sequence experts = base(*plain_);
    experts.settings.model.dit = golden("wan22_moe_low_tiny.safetensors").string();
    experts.settings.model.ditHighNoise = golden("wan22_moe_high_tiny.safetensors").string();
    experts.settings.sampler.steps = 6;
    experts.settings.sampler.shift = 12.0;
    experts.settings.sampler.guidanceHighNoise = 4.0;
    experts.shots = {tinyShot("a", 1, ContinuityMode::None, 64), tinyShot("b", 2, ContinuityMode::Latent, 64)};
    experts.shots[1].switchStep = 2;
    experts.shots[1].guidanceHighNoise = 5.5;
    out.emplace_back("experts", experts);

    Sequence i2v = experts;
    i2v.settings.model.dit = golden("wan22_i2v_low_tiny.safetensors").string();
    i2v.settings.model.ditHighNoise = golden("wan22_i2v_high_tiny.safetensors").string();
    i2v.shots.push_back(tinyShot("c", 3, ContinuityMode::VaeRoundtrip, 64));
    i2v.shots[0].startImage = (root() / "fallback.png").string();
    out.emplace_back("i2v", i2v);

    Sequence forcing = base(*df_);
    forcing.settings.sampler.arStep = 1;
    forcing.shots = {tinyShot("a", 1), tinyShot("b", 2, ContinuityMode::Latent)};
    forcing.shots[1].continuity.conditionNoise = 20;
    forcing.shots[1].continuity.prefixFrames = 2;
    out.emplace_back("diffusion forcing", forcing);

    Sequence stream = base(*causal_);
    stream.settings.sampler.streamWindow = 2;
    stream.shots = {tinyShot("a", 1, ContinuityMode::Stream), tinyShot("b", 2, ContinuityMode::Stream),
                    tinyShot("c", 3, ContinuityMode::Latent)};
    stream.shots[1].prompt = "a blue square moving up on a black background";
    out.emplace_back("stream", stream);

    Sequence ti2v = base(*ti2v_);
    ti2v.shots = {tinyShot("a", 1, ContinuityMode::None, 64), tinyShot("b", 2, ContinuityMode::Latent, 64),
                  tinyShot("c", 3, ContinuityMode::VaeRoundtrip, 64)};
    ti2v.shots[0].startImage = (root() / "fallback.png").string();
    ti2v.shots[1].startImage = (root() / "fallback.png").string();  // not used: the shot continues
    out.emplace_back("ti2v", ti2v);
    return out;
  }

 private Q_SLOTS:
  void initTestCase() {
    runtime::initTorchRuntime();
    plain_ = writeTinyModelSet(root() / "plain", 11);
    df_ = writeTinyModelSet(root() / "df", 12, true);
    causal_ = writeTinyModelSet(root() / "causal", 13, false, 1);
    ti2v_ = writeTinyModelSet(root() / "ti2v", 14, false, 0, true);
    writeFile(root() / "fallback.png", kTinyPngForResolve());
    const io::WeightSet dit = io::WeightSet::open(plain_->dit);
    io::NamedTensors lora;
    for (const io::WeightInfo& w : dit.weights()) {
      if (w.name.find("self_attn.") == std::string::npos || !w.name.ends_with(".weight") || w.shape.size() != 2)
        continue;
      const std::string layer = "diffusion_model." + w.name.substr(0, w.name.size() - 7);
      lora.emplace_back(layer + ".lora_B.weight", at::full({static_cast<std::int64_t>(w.shape[0]), 2}, 0.01));
      lora.emplace_back(layer + ".lora_A.weight", at::full({2, static_cast<std::int64_t>(w.shape[1])}, 0.02));
    }
    io::saveSafetensors(root() / "style.safetensors", lora);
  }

  static std::string kTinyPngForResolve() {
    return std::string(
        "\x89\x50\x4e\x47\x0d\x0a\x1a\x0a\x00\x00\x00\x0d\x49\x48\x44\x52\x00\x00\x00\x02\x00\x00\x00\x02\x08\x02\x00"
        "\x00"
        "\x00\xfd\xd4\x9a\x73\x00\x00\x00\x10\x49\x44\x41\x54\x78\x9c\x63\x38\x21\x27\x07\x44\x0c\x10\x0a\x00\x1f\x26"
        "\x04"
        "\x11\xa2\x8f\x22\xaf\x00\x00\x00\x00\x49\x45\x4e\x44\xae\x42\x60\x82",
        73);
  }

  // The workflows of real model sets are resolved against stand-in files of their families (the geometry, the
  // channels and the capabilities are the family's, the sizes tiny): clean, and the plan takes their shots.
  void everyWorkflowResolvesAndIsPlannedAsResolved() {
    int resolvedWorkflows = 0;
    for (const auto& entry : fs::directory_iterator(sourceDir() / "workflows")) {
      if (entry.path().extension() != ".json") continue;
      Sequence sequence = load(entry.path());
      fs::path folder = entry.path().parent_path();
      if (!sequence.settings.model.isBuiltin()) {
        folder = root() / entry.path().stem();
        fs::create_directories(folder / "images");
        fs::copy(sourceDir() / "workflows" / "images", folder / "images",
                 fs::copy_options::recursive | fs::copy_options::overwrite_existing);
        const bool ti2v = sequence.settings.model.dit.find("ti2v") != std::string::npos;
        const bool df = sequence.settings.model.dit.find("skyreels") != std::string::npos;
        standIn(folder / sequence.settings.model.folder, sequence,
                golden(ti2v ? "wan22_ti2v_tiny.safetensors"
                       : df ? "skyreels_df_tiny.safetensors"
                            : "wan_dit_tiny.safetensors"),
                golden(ti2v ? "wan22_vae_tiny.safetensors" : "wan_vae_tiny.safetensors"));
      }
      const resolve::ResolvedSequence resolved = resolve::resolveSequence(sequence, {folder, true});
      QVERIFY2(resolved.ok(), (entry.path().filename().string() + ":\n" + formatAll(resolved.problems)).c_str());
      QVERIFY(!resolved.models.assumed);
      QCOMPARE(resolved.shots.size(), sequence.shots.size());
      checkPlan(resolved, resolve::planRequest(resolved, sequence.settings, {}), entry.path().filename().string());
      QCOMPARE(render::shotKeys(resolved, "model").size(), sequence.shots.size());
      ++resolvedWorkflows;
    }
    QVERIFY(resolvedWorkflows >= 7);
  }

  // The demo's workflows and the edge documents, rendered: what each shot did is what was resolved for it.
  void theShotPassRunsWhatWasResolved() {
    std::vector<std::pair<std::string, Sequence>> documents = edgeDocuments();
    for (const char* name : {"demo.json", "demo_stream.json", "resolution_change.json"})
      documents.emplace_back(name, load(workflow(name)));
    for (const auto& [name, sequence] : documents) {
      const fs::path folder = sequence.settings.model.isBuiltin() ? workflow("demo.json").parent_path() : root();
      const resolve::ResolvedSequence resolved = resolve::resolveSequence(sequence, {folder, true});
      QVERIFY2(resolved.ok(), (name + ":\n" + formatAll(resolved.problems)).c_str());
      checkPlan(resolved, resolve::planRequest(resolved, sequence.settings, {}), name);
      const fs::path out = root() / "renders" / name;
      const Recorded events = render(sequence, folder, out);
      checkRender(resolved, events, out);
      if (QTest::currentTestFailed()) QFAIL(("in " + name).c_str());
    }
  }

  // The key reads the resolved shot alone: documents that resolve alike share their keys, and a field a shot does
  // not run with (a cache off for it, steps under a few-step schedule, a start image it does not use) is not in it.
  void keysFollowTheResolvedShotOnly() {
    for (const auto& [name, sequence] : edgeDocuments()) {
      const resolve::ResolvedSequence resolved = resolve::resolveSequence(sequence, {root()});
      Sequence changed = sequence;
      for (std::size_t i = 0; i < changed.shots.size(); ++i) {
        Shot& shot = changed.shots[i];
        const resolve::ResolvedShot& r = resolved.shots[i];
        if (r.fewStep) shot.steps = 17;
        if (r.startImage.empty()) shot.startImage.clear();
        if (!r.cache.applies) shot.cache = StepCacheSettings{r.cache.policy, 0.77, {}, {}};
        if (r.sampling != resolve::SamplingKind::PerFrame) shot.continuity.conditionNoise = 33;
      }
      if (std::none_of(resolved.shots.begin(), resolved.shots.end(),
                       [](const resolve::ResolvedShot& r) { return r.sampling == resolve::SamplingKind::PerFrame; }))
        changed.settings.sampler.arStep = 3;
      const resolve::ResolvedSequence again = resolve::resolveSequence(changed, {root()});
      QVERIFY2(render::shotKeys(resolved, "model") == render::shotKeys(again, "model"), name.c_str());
      // A value a shot runs with is in its key.
      Sequence seeded = sequence;
      seeded.shots.back().seed += 1;
      QVERIFY2(render::shotKeys(resolve::resolveSequence(seeded, {root()}), "model").back() !=
                   render::shotKeys(resolved, "model").back(),
               name.c_str());
    }
  }
};

SHOTCHAIN_TEST(ResolvedShots, Core)
#include "test_resolved_shots.moc"
