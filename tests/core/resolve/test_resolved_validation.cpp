// What the resolver refuses with the field and the fix, against the family the model set belongs to: what a
// render would refuse is refused by `validate` first.
#include <QtTest/qtestassert.h>
#include <QTemporaryDir>
#include <QTest>

#include <functional>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "golden_model_facts.h"
#include "io/safetensors_writer.h"
#include "io/weight_set.h"
#include "render/output_layout.h"
#include "render/renderer.h"
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
using Json = nlohmann::ordered_json;

namespace {

using Mutation = std::function<void(Json&)>;

// Three 17-frame shots at 64×64 on the built-in demo model (a Wan 2.1 geometry: 4 frames a latent, 8 pixels ×
// patch 2 a token side).
Json demoDocument() {
  return Json::parse(R"({
    "schema": "shotchain.sequence/1", "name": "Base", "fps": 16, "model": "builtin:demo",
    "sampler": {"steps": 20, "guidance": 4.0, "shift": 3.0, "solver": "unipc"},
    "memory": {"policy": "auto", "budget": null, "allocator_tuning": true},
    "shots": [
      {"id": "a", "prompt": "a red circle", "frames": 17, "width": 64, "height": 64, "seed": 1, "continuity": {"mode": "none", "tag": "main"}},
      {"id": "b", "prompt": "a red circle", "frames": 17, "width": 64, "height": 64, "seed": 2, "continuity": {"mode": "latent", "tag": "main"}},
      {"id": "c", "prompt": "a red circle", "frames": 17, "width": 64, "height": 64, "seed": 3,
       "continuity": {"mode": "latent_overlap", "tag": "main", "overlap_latents": 2}}
    ]
  })");
}

Sequence parsed(const Json& doc) {
  const LoadResult result = parseSequence(doc.dump());
  QTEST_ASSERT(result.ok());
  return *result.sequence;
}

bool hasError(const Diagnostics& problems, const std::string& path, const std::string& message) {
  for (const Diagnostic& d : problems)
    if (d.isError() && d.path == path && d.message.find(message) != std::string::npos) return true;
  return false;
}

// The golden tiny files as a model set of explicit files (absolute paths).
Json goldenModel(const char* dit, const char* vae, bool tokenizer = true, const char* highNoise = nullptr) {
  Json model = {{"dit", golden(dit).string()},
                {"vae", golden(vae).string()},
                {"text_encoder", golden("umt5_tiny.safetensors").string()}};
  if (tokenizer) model["tokenizer"] = (sourceDir() / "resources" / "demo" / "tokenizer.model").string();
  if (highNoise) model["dit_high_noise"] = golden(highNoise).string();
  return model;
}

}  // namespace

Q_DECLARE_METATYPE(Mutation)

class ResolvedValidation : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  std::filesystem::path root() const { return dir_.path().toStdString(); }

 private Q_SLOTS:
  void initTestCase() { runtime::initTorchRuntime(); }

  void demoDocumentResolvesClean() {
    const Diagnostics problems = resolve::validate(parsed(demoDocument()), {root()});
    QVERIFY2(problems.empty(), formatAll(problems).c_str());
  }

  // The rules of the model set's geometry and of what runs with what, each with its field and the fix.
  void familyRuleIsNamed_data() {
    QTest::addColumn<Mutation>("mutate");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("message");
    auto row = [](const char* name, Mutation m, const char* path, const char* message) {
      QTest::newRow(name) << m << QString(path) << QString(message);
    };
    row(
        "frames not 4k+1", [](Json& d) { d["shots"][2]["frames"] = 18; }, "shots[2].frames",
        "18 is not 4k+1 (try 17 or 21)");
    row(
        "width not a multiple of 16", [](Json& d) { d["shots"][0]["width"] = 100; }, "shots[0].width",
        "100 is not a multiple of 16 for Wan 2.1 T2V (diffusion forcing), causal, chunk 1 (VAE stride 4 × patch 4); "
        "try 96 or 112");
    row(
        "height not a multiple of 16", [](Json& d) { d["shots"][1]["height"] = 70; }, "shots[1].height",
        "not a multiple of 16");
    row(
        "overlap too large for the shot", [](Json& d) { d["shots"][2]["continuity"]["overlap_latents"] = 5; },
        "shots[2].continuity.overlap_latents", "less than the shot's 5 latent frames");
    row(
        "overlap beyond the previous shot",
        [](Json& d) {
          d["shots"][1]["frames"] = 5;
          d["shots"][2]["frames"] = 33;
          d["shots"][2]["continuity"]["overlap_latents"] = 3;
        },
        "shots[2].continuity.overlap_latents", "more than the previous shot's 2 latent frames");
    row(
        "prefix frames fill the shot", [](Json& d) { d["shots"][1]["continuity"]["prefix_frames"] = 5; },
        "shots[1].continuity.prefix_frames", "less than the shot's 5 latent frames");
    row(
        "stream changes the size",
        [](Json& d) {
          d["shots"][1]["continuity"]["mode"] = "stream";
          d["shots"][1]["width"] = 128;
        },
        "shots[1].continuity.mode", "needs its size");
  }

  void familyRuleIsNamed() {
    QFETCH(Mutation, mutate);
    QFETCH(QString, path);
    QFETCH(QString, message);
    Json doc = demoDocument();
    mutate(doc);
    const LoadResult loaded = parseSequence(doc.dump());
    QVERIFY2(loaded.ok(), formatAll(loaded.diagnostics).c_str());  // the document itself is fine
    const Diagnostics problems = resolve::validate(*loaded.sequence, {root()});
    QVERIFY2(
        hasError(problems, path.toStdString(), message.toStdString()),
        ("expected " + path.toStdString() + ": " + message.toStdString() + "\ngot:\n" + formatAll(problems)).c_str());
  }

  // A 1280×720 shot for Wan 2.2 TI2V (a size users type) is refused with the family's geometry and the sizes
  // that fit; before, it passed validate and plan and failed at the first DiT call.
  void ti2vGeometryIsTheFamilys() {
    Json doc = demoDocument();
    doc["model"] = goldenModel("wan22_ti2v_tiny.safetensors", "wan22_vae_tiny.safetensors");
    doc["shots"] = Json::array({doc["shots"][0]});
    doc["shots"][0]["width"] = 1280;
    doc["shots"][0]["height"] = 720;
    const Diagnostics problems = resolve::validate(parsed(doc), {root()});
    QVERIFY2(hasError(problems, "shots[0].height",
                      "720 is not a multiple of 32 for Wan 2.2 TI2V (VAE stride 16 × patch 2); try 704 or 736"),
             formatAll(problems).c_str());
    QVERIFY2(!hasError(problems, "shots[0].width", ""), formatAll(problems).c_str());
    doc["shots"][0]["height"] = 704;
    QVERIFY2(!hasErrors(resolve::validate(parsed(doc), {root()})),
             formatAll(resolve::validate(parsed(doc), {root()})).c_str());
    // The CLI says the same and exits 1.
    writeFile(root() / "ti2v.json", doc.dump(2));
    doc["shots"][0]["height"] = 720;
    writeFile(root() / "ti2v_720.json", doc.dump(2));
    const CliRun bad = runCli({"validate", q((root() / "ti2v_720.json").string())}, 60000);
    QCOMPARE(bad.exitCode, 1);
    QVERIFY2(bad.out.contains("shots[0].height: 720 is not a multiple of 32 for Wan 2.2 TI2V"), qPrintable(bad.out));
  }

  // A text encoder file without an embedded tokenizer, and no model.tokenizer: refused by validate, as render does.
  void aTextEncoderWithoutItsTokenizerIsRefused() {
    Json doc = demoDocument();
    doc["model"] = goldenModel("wan_dit_tiny.safetensors", "wan_vae_tiny.safetensors", false);
    const Diagnostics problems = resolve::validate(parsed(doc), {root()});
    QVERIFY2(hasError(problems, "model.tokenizer", "umt5_tiny.safetensors carries no tokenizer"),
             formatAll(problems).c_str());
    QVERIFY2(hasError(problems, "model.tokenizer", "give model.tokenizer a spiece.model file"),
             formatAll(problems).c_str());
    doc["model"] = goldenModel("wan_dit_tiny.safetensors", "wan_vae_tiny.safetensors", true);
    QVERIFY(!hasError(resolve::validate(parsed(doc), {root()}), "model.tokenizer", ""));
  }

  // A two-expert shot runs no step cache: its threshold is not in its key, and the plan keeps no cache tensors
  // for it (before, both were).
  void aCacheThatDoesNotRunIsNotInTheKeyOrThePlan() {
    Json doc = demoDocument();
    doc["model"] = goldenModel("wan22_moe_low_tiny.safetensors", "wan_vae_tiny.safetensors", true,
                               "wan22_moe_high_tiny.safetensors");
    doc["sampler"]["cache"] = {{"policy", "teacache"}, {"threshold", 0.1}};
    const Sequence low = parsed(doc);
    doc["sampler"]["cache"]["threshold"] = 0.3;
    const Sequence high = parsed(doc);
    const resolve::ResolvedSequence resolved = resolve::resolveSequence(low, {root()});
    QVERIFY(resolved.twoExperts);
    for (const resolve::ResolvedShot& shot : resolved.shots) {
      QVERIFY(!shot.cache.applies);
      QVERIFY2(shot.cache.off.find("two experts") != std::string::npos, shot.cache.off.c_str());
    }
    QCOMPARE(shotKeysOf(low, root()), shotKeysOf(high, root()));
    const memory::PlanRequest request = resolve::planRequest(resolved, low.settings, {});
    for (const memory::PlanShot& shot : request.shots) QCOMPARE(shot.stepCacheTensors, 0);
    // With one DiT the cache runs: its threshold is in the key and the plan keeps its residual.
    doc["model"].erase("dit_high_noise");
    const Sequence one = parsed(doc);
    doc["sampler"]["cache"]["threshold"] = 0.1;
    QVERIFY(shotKeysOf(one, root()) != shotKeysOf(parsed(doc), root()));
    QCOMPARE(resolve::planRequest(resolve::resolveSequence(one, {root()}), one.settings, {}).shots[0].stepCacheTensors,
             1);
  }

  // A LoRA on the high-noise expert with memory.experts auto, where auto keeps one expert at a time (before: refused
  // at that shot, after the earlier ones had rendered). The expert's slot owns its LoRAs and puts them on whenever it
  // arrives on the device, so the swapped render runs whole and gives the frames of both experts resident.
  void aHighNoiseLoraUnderASwapRendersAsResident() {
    const TinyModelSet set = writeTinyModelSet(root() / "raw", 41);
    Sequence s;
    s.settings.model = set.modelSet();
    s.settings.model.dit = golden("wan22_moe_low_tiny.safetensors").string();
    s.settings.model.ditHighNoise = golden("wan22_moe_high_tiny.safetensors").string();
    s.settings.sampler.steps = 4;
    s.settings.sampler.shift = 12.0;
    s.settings.policy = ResidencyPolicy::Pinned;
    s.shots = {tinyShot("a", 1, ContinuityMode::None, 64), tinyShot("b", 2, ContinuityMode::Latent, 64)};
    render::RenderOptions options;
    options.sequenceDirectory = root();
    options.outputDirectory = root() / "swap.render";
    options.framesOnDisk = false;
    render::Renderer renderer;
    // A budget that holds one expert but not both: auto swaps them.
    const memory::MemoryPlan open = renderer.plan(s, options);
    for (double share = 1.0; share > 0.2; share -= 0.01) {
      options.budget = static_cast<std::uint64_t>(static_cast<double>(open.peakExpertsResident) * share / 0.95);
      if (renderer.plan(s, options).expertsChosen == ExpertResidency::Swap) break;
    }
    QCOMPARE(renderer.plan(s, options).expertsChosen, ExpertResidency::Swap);
    s.shots[1].loras = std::vector<LoraRef>{LoraRef{golden("lora_tiny.pt").string(), 1.0, "high", {}}};
    QVERIFY(!hasErrors(resolve::validate(s, {root()})));
    render::RenderObserver none;
    const render::RenderSummary swapped = renderer.render(s, options, none);
    QVERIFY(swapped.finished.completed);
    QCOMPARE(swapped.shots[1].experts->residency, std::string("swap"));
    QVERIFY(swapped.shots[1].loras && swapped.shots[1].loras->files.front().ends_with("(high noise)"));
    // Both resident (no budget), and read again at every boundary: the same frames, bit for bit.
    for (const ExpertResidency placement : {ExpertResidency::Resident, ExpertResidency::Reload}) {
      Sequence other = s;
      other.settings.experts = placement;
      QVERIFY(!hasErrors(resolve::validate(other, {root()})));
      render::RenderOptions elsewhere = options;
      elsewhere.budget.reset();
      elsewhere.outputDirectory = root() / (std::string("experts-") + toString(placement));
      QVERIFY(renderer.render(other, elsewhere, none).finished.completed);
      for (int i = 0; i < 2; ++i) {
        const std::string& id = s.shots[static_cast<std::size_t>(i)].id;
        const auto here = render::readShotTail(render::shotDirectory(elsewhere.outputDirectory, i, id), at::kCPU);
        const auto there = render::readShotTail(render::shotDirectory(options.outputDirectory, i, id), at::kCPU);
        QVERIFY(here && there);
        QVERIFY2(at::equal(here->latent, there->latent), toString(placement));
      }
    }
  }

  // A stream shot's new latents are whole chunks of the DiT's causal block.
  void aStreamShotIsWholeChunks() {
    const TinyModelSet causal = writeTinyModelSet(root() / "causal2", 13, false, 2);
    Sequence s;
    s.settings.model = causal.modelSet();
    s.shots = {tinyShot("a", 1, ContinuityMode::Stream), tinyShot("b", 2, ContinuityMode::Stream)};
    s.shots[0].frames = 13;  // 4 latent frames: two chunks
    QVERIFY2(!hasErrors(resolve::validate(s, {root()})), formatAll(resolve::validate(s, {root()})).c_str());
    s.shots[1].frames = 13;  // continuing: 3 new latent frames
    QVERIFY(hasError(
        resolve::validate(s, {root()}), "shots[1].frames",
        "13 frames give 3 new latent frames (the first frame repeats the previous shot's last), not whole chunks of 2: "
        "try 9 or 17 frames"));
  }

  // A step cache says where it does not run and why, once per field.
  void aStepCacheSaysWhereItDoesNotRun() {
    Json doc = demoDocument();
    doc["sampler"]["cache"] = {{"policy", "teacache"}, {"calibration", "x.cache.json"}};
    doc["shots"][1]["continuity"]["mode"] = "stream";
    doc["shots"][1]["frames"] = 13;
    doc["shots"][2]["cache"] = {{"policy", "easycache"}, {"calibration", "y.cache.json"}};
    const QString all = q(formatAll(resolve::validate(parsed(doc), {root()})));
    QVERIFY2(all.contains("sampler.cache.policy: warning: step cache teacache is off for this shot: stream shots"),
             qPrintable(all));
    QVERIFY2(all.contains("shots[2].cache.calibration: warning: is not read by easycache"), qPrintable(all));
    QVERIFY2(all.contains("sampler.cache.calibration: warning: \"x.cache.json\" does not exist"), qPrintable(all));
    doc["sampler"]["cache"]["policy"] = "off";
    QVERIFY2(!q(formatAll(resolve::validate(parsed(doc), {root()}))).contains("step cache teacache"), qPrintable(all));
  }
};

SHOTCHAIN_TEST(ResolvedValidation, Core)
#include "test_resolved_validation.moc"
