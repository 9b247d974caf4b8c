// Wan 2.2 A14B through the real renderer: two tiny experts (the golden §9.4 / §9.5 pair) named by the model
// set, the high-noise one for the steps at or above the boundary, each with its guidance; the I2V pair
// conditioned on a start image, or on the previous shot's last frame when a shot continues.
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <map>

#include <ATen/ATen.h>

#include "export_test_frames.h"
#include "render/output_layout.h"
#include "render/renderer.h"
#include "render/shot_record.h"
#include "runtime/torch_runtime.h"
#include "sampling/flow_schedule.h"
#include "sequence/validation.h"
#include "test_bmp.h"
#include "test_registry.h"
#include "test_support.h"
#include "tiny_model_set.h"

using namespace shotchain;
using namespace shotchain::testing;
namespace fs = std::filesystem;

namespace {

struct Failures : render::RenderObserver {
  std::vector<std::string> messages;
  void failed(const render::RenderFailure& f) override { messages.push_back(f.message); }
};

}  // namespace

class ExpertsRenderTest : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  fs::path root() const { return dir_.path().toStdString(); }
  TinyModelSet set_;

  Sequence sequence(const char* low, const char* high) const {
    Sequence s;
    s.settings.model = set_.modelSet();
    s.settings.model.dit = golden(low).string();
    if (high) s.settings.model.ditHighNoise = golden(high).string();
    s.settings.sampler.steps = 4;
    s.settings.sampler.shift = 12.0;
    s.settings.sampler.guidance = 3.0;
    s.settings.sampler.guidanceHighNoise = 4.0;
    s.settings.policy = ResidencyPolicy::Pinned;
    s.shots = {tinyShot("a", 1, ContinuityMode::None, 64), tinyShot("b", 2, ContinuityMode::Latent, 64)};
    return s;
  }

  render::RenderSummary render(const Sequence& s, const std::string& out, render::RenderObserver& observer) const {
    render::RenderOptions options;
    options.outputDirectory = root() / out;
    options.sequenceDirectory = root();
    options.framesOnDisk = false;
    options.loadImage = [](const fs::path&) { return syntheticFrame(64, 64, 3); };
    render::Renderer renderer;
    return renderer.render(s, options, observer);
  }

  at::Tensor tail(const std::string& out, int index, const std::string& id) const {
    const auto t = render::readShotTail(render::shotDirectory(root() / out, index, id), at::kCPU);
    return t ? t->latent : at::Tensor();
  }

 private Q_SLOTS:
  void initTestCase() {
    runtime::initTorchRuntime();
    set_ = writeTinyModelSet(root() / "raw", 41);
  }

  void textToVideoSwitchesAtTheBoundary() {
    const Sequence s = sequence("wan22_moe_low_tiny.safetensors", "wan22_moe_high_tiny.safetensors");
    render::RenderObserver none;
    const render::RenderSummary summary = render(s, "t2v", none);
    QVERIFY(summary.finished.completed);
    QVERIFY(summary.plan.highNoiseExpertWeights > 0);
    // The schedule's integer timesteps against 875 (T2V's boundary): expert and guidance per step.
    const sampling::FlowSchedule schedule = sampling::flowMatchingSchedule(4, 12.0, sampling::ScheduleKind::UniPC);
    std::vector<int> experts;
    std::vector<double> guidances;
    for (const std::int64_t t : schedule.timesteps) {
      experts.push_back(t >= 875 ? 1 : 0);
      guidances.push_back(t >= 875 ? 4.0 : 3.0);
    }
    QVERIFY(std::count(experts.begin(), experts.end(), 1) > 0 && std::count(experts.begin(), experts.end(), 0) > 0);
    for (const render::ShotFinished& shot : summary.shots) {
      QVERIFY(shot.experts.has_value());
      QCOMPARE(shot.experts->boundary, 875.0);
      QCOMPARE(shot.experts->experts, experts);
      QCOMPARE(shot.experts->guidances, guidances);
      QCOMPARE(shot.experts->switchStep, static_cast<int>(std::count(experts.begin(), experts.end(), 1)));
      QVERIFY(shot.experts->imageCondition.empty());
    }
    // What shot.json keeps is what was reported.
    const auto record = render::readShotRecord(render::shotDirectory(root() / "t2v", 1, "b"));
    QVERIFY(record && record->experts);
    QCOMPARE(record->experts->experts, experts);

    // The low-noise expert alone gives other latents: the high-noise one ran.
    Sequence one = s;
    one.settings.model.ditHighNoise.clear();
    const render::RenderSummary single = render(one, "one", none);
    QVERIFY(single.finished.completed);
    QVERIFY(!single.shots[0].experts.has_value());
    QVERIFY(!at::equal(tail("t2v", 0, "a"), tail("one", 0, "a")));

    // The low-noise expert offloaded between shots: the same latents, bit for bit.
    Sequence offload = s;
    offload.settings.policy = ResidencyPolicy::Offload;
    const render::RenderSummary moved = render(offload, "offload", none);
    QVERIFY(moved.finished.completed);
    QCOMPARE(moved.plan.chosen, ResidencyPolicy::Offload);
    for (const auto& [index, id] : {std::pair{0, "a"}, std::pair{1, "b"}})
      QVERIFY(at::equal(tail("t2v", index, id), tail("offload", index, id)));
  }

  void imageToVideoFromAStartImageThenTheLastFrame() {
    Sequence s = sequence("wan22_i2v_low_tiny.safetensors", "wan22_i2v_high_tiny.safetensors");
    s.settings.sampler.shift = 5.0;
    s.shots[0].startImage = "start.bmp";
    s.shots.push_back(tinyShot("c", 3, ContinuityMode::VaeRoundtrip, 64));
    writeFile(root() / "start.bmp", bmpOf(syntheticFrame(64, 64, 3)));
    render::RenderObserver none;
    const render::RenderSummary summary = render(s, "i2v", none);
    QVERIFY(summary.finished.completed);
    QCOMPARE(summary.shots[0].experts->boundary, 900.0);
    QCOMPARE(summary.shots[0].conditionedOn, std::string("start_image"));
    QCOMPARE(summary.shots[0].experts->imageCondition, std::string("start_image"));
    // `latent`: the handed latent frame stands for the image (no decode, no encode); vae_roundtrip: the last frame.
    QCOMPARE(summary.shots[1].conditionedOn, std::string("handed_latent"));
    QCOMPARE(summary.shots[1].experts->imageCondition, std::string("handed_latent"));
    QCOMPARE(summary.shots[2].conditionedOn, std::string("previous_last_frame"));
    QCOMPARE(summary.cuts.size(), std::size_t{2});  // each cut measured, so the two ways can be compared

    // Neither a start image nor a shot before it: refused before any work, naming the field.
    Sequence plain = s;
    plain.shots[0].startImage.clear();
    plain.shots.resize(1);
    try {
      render(plain, "no-image", none);
      QFAIL("an image-to-video shot without an image rendered");
    } catch (const render::RenderError& error) {
      QCOMPARE(error.field(), std::string("shots[0].start_image"));
      QVERIFY2(std::string(error.what()).find("image-to-video") != std::string::npos, error.what());
    }
  }

  // Both resident, swapped through host memory at the boundary, or read from disk: the same latents bit for
  // bit, the bytes each shot moved are the plan's, and one expert at a time holds the budget lower.
  void residencyChoicesAgree() {
    const Sequence base = sequence("wan22_moe_low_tiny.safetensors", "wan22_moe_high_tiny.safetensors");
    std::map<ExpertResidency, render::RenderSummary> runs;
    for (const ExpertResidency mode : {ExpertResidency::Resident, ExpertResidency::Swap, ExpertResidency::Reload}) {
      Sequence s = base;
      s.settings.experts = mode;
      render::RenderObserver none;
      const render::RenderSummary summary = render(s, std::string("placed-") + toString(mode), none);
      QVERIFY(summary.finished.completed);
      QCOMPARE(summary.plan.expertsChosen, mode);
      QCOMPARE(summary.plan.expertBytesPerShot.size(), std::size_t{2});
      for (std::size_t i = 0; i < 2; ++i) {
        QCOMPARE(summary.shots[i].experts->residency, std::string(toString(mode)));
        QCOMPARE(summary.shots[i].experts->bytesMoved, summary.plan.expertBytesPerShot[i]);
      }
      runs.emplace(mode, summary);
    }
    const std::uint64_t high = runs.at(ExpertResidency::Resident).plan.highNoiseExpertWeights;
    QVERIFY(high > 0);
    QCOMPARE(runs.at(ExpertResidency::Resident).shots[0].experts->bytesMoved, std::uint64_t{0});
    QCOMPARE(runs.at(ExpertResidency::Swap).shots[0].experts->bytesMoved, 4 * high);    // high in, low out; and back
    QCOMPARE(runs.at(ExpertResidency::Reload).shots[1].experts->bytesMoved, 2 * high);  // each read once
    for (const auto& [index, id] : {std::pair{0, "a"}, std::pair{1, "b"}}) {
      QVERIFY(at::equal(tail("placed-resident", index, id), tail("placed-swap", index, id)));
      QVERIFY(at::equal(tail("placed-resident", index, id), tail("placed-reload", index, id)));
    }
    QVERIFY(runs.at(ExpertResidency::Swap).reservedPeak < runs.at(ExpertResidency::Resident).reservedPeak);
    QCOMPARE(runs.at(ExpertResidency::Resident).reservedPeak - runs.at(ExpertResidency::Swap).reservedPeak, high);
  }

  // A budget that holds one expert but not two: auto swaps them (the refusal at A14B size: test_memory_plan).
  void planSwapsWhenBothDoNotFit() {
    Sequence s = sequence("wan22_moe_low_tiny.safetensors", "wan22_moe_high_tiny.safetensors");
    render::RenderOptions options;
    options.sequenceDirectory = root();
    render::Renderer renderer;
    const memory::MemoryPlan open = renderer.plan(s, options);
    QCOMPARE(open.expertsChosen, ExpertResidency::Resident);
    QVERIFY(open.peakExpertsSwapped < open.peakExpertsResident);
    // Budgets from both-resident's peak down: where both stop fitting, auto swaps them and still fits.
    std::optional<memory::MemoryPlan> tight;
    for (double share = 1.0; share > 0.2 && !tight; share -= 0.01) {
      options.budget = static_cast<std::uint64_t>(static_cast<double>(open.peakExpertsResident) * share / 0.95);
      const memory::MemoryPlan plan = renderer.plan(s, options);
      if (plan.expertsChosen == ExpertResidency::Swap)
        tight = plan;
      else
        QVERIFY2(plan.fits, plan.reason.c_str());  // resident is chosen only where it fits
    }
    QVERIFY(tight.has_value());
    QVERIFY2(tight->fits, tight->reason.c_str());
    QVERIFY2(tight->expertReason.find("swaps the experts") != std::string::npos, tight->expertReason.c_str());
  }

  // A LoRA per expert: on the high-noise expert it changes the picture, and wherever the experts live (both
  // resident, swapped through host memory, read again at the boundary) the expert carries it on the device.
  void loraPerExpert() {
    Sequence s = sequence("wan22_moe_low_tiny.safetensors", "wan22_moe_high_tiny.safetensors");
    s.settings.experts = ExpertResidency::Resident;
    s.settings.loras = {LoraRef{golden("lora_tiny.pt").string(), 1.0, "high", {}}};
    render::RenderObserver none;
    const render::RenderSummary patched = render(s, "lora-high", none);
    QVERIFY(patched.finished.completed);
    QVERIFY(patched.shots[0].loras && patched.shots[0].loras->weightsPatched > 0);
    QVERIFY(patched.shots[0].loras->files.front().ends_with("(high noise)"));
    Sequence plain = s;
    plain.settings.loras.clear();
    QVERIFY(render(plain, "lora-none", none).finished.completed);
    QVERIFY(!at::equal(tail("lora-high", 0, "a"), tail("lora-none", 0, "a")));
    s.settings.loras.push_back(LoraRef{golden("lora_tiny.pt").string(), 0.5, "low", {}});
    QVERIFY(render(s, "lora-both", none).finished.completed);
    for (const ExpertResidency placement : {ExpertResidency::Swap, ExpertResidency::Reload}) {
      s.settings.experts = placement;
      const std::string name = std::string("lora-") + toString(placement);
      const render::RenderSummary moved = render(s, name, none);
      QVERIFY(moved.finished.completed);
      QVERIFY(moved.shots[0].experts.has_value());
      QCOMPARE(moved.shots[0].experts->residency, std::string(toString(placement)));
      QVERIFY(moved.shots[0].experts->bytesMoved > 0);
      for (int i = 0; i < 2; ++i) {
        const std::string id = i == 0 ? "a" : "b";
        QVERIFY2(at::equal(tail(name, i, id), tail("lora-both", i, id)), (name + " " + id).c_str());
      }
    }
  }

  void documentFields() {
    Sequence s = sequence("wan22_moe_low_tiny.safetensors", "wan22_moe_high_tiny.safetensors");
    s.settings.sampler.boundary = 1.5;
    bool refused = false;
    for (const Diagnostic& d : validateSequence(s))
      refused = refused || (d.path == "sampler.boundary" && d.severity == Diagnostic::Severity::Error);
    QVERIFY(refused);
    s.settings.sampler.boundary = 0.9;
    s.settings.model.ditHighNoise.clear();
    bool warned = false;
    for (const Diagnostic& d : validateSequence(s))
      warned = warned || (d.path == "sampler.boundary" && d.severity == Diagnostic::Severity::Warning);
    QVERIFY(warned);
  }

  void aPairOfOtherShapesIsRefused() {
    Sequence s = sequence("wan22_moe_low_tiny.safetensors", "wan22_i2v_high_tiny.safetensors");
    render::RenderObserver none;
    try {
      render(s, "mismatch", none);
      QFAIL("a T2V expert paired with an I2V one rendered");
    } catch (const render::RenderError& error) {
      QCOMPARE(error.field(), std::string("model.dit_high_noise"));
      QVERIFY2(std::string(error.what()).find("is not the other expert") != std::string::npos, error.what());
    }
  }
};

SHOTCHAIN_TEST(ExpertsRenderTest, Core)
#include "test_experts_render.moc"
