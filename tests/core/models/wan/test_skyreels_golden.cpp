#include <QProcess>
#include <QTest>

#include <cstdio>
#include <filesystem>
#include <optional>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "golden_compare.h"
#include "io/safetensors_reader.h"
#include "io/weight_set.h"
#include "models/wan/wan_model.h"
#include "sampling/flow_schedule.h"
#include "sampling/timestep_matrix.h"
#include "test_registry.h"

using namespace shotchain;
using namespace shotchain::models;
using shotchain::testing::compareTensors;
using shotchain::testing::golden;

namespace {

// Golden README §8: as the Wan DiT, ≤ 1e-4 max abs and ≤ 1e-5 relative L2.
constexpr double kMaxAbs = 1e-4;
constexpr double kRelL2 = 1e-5;

at::Tensor longTable(const std::vector<std::int64_t>& values, std::int64_t rows, std::int64_t columns) {
  return at::tensor(values, at::TensorOptions().dtype(at::kLong)).reshape({rows, columns});
}

}  // namespace

// SkyReels-V2's diffusion-forcing WanModel (per-frame timesteps, fps embedding, block-causal
// attention) and its timestep matrix, against the official code's outputs.
class TestSkyreelsGolden : public QObject {
  Q_OBJECT

  std::shared_ptr<const io::SafetensorsFile> io_;
  std::optional<WanModel> model_;

  void check(const std::string& what, const at::Tensor& got, const at::Tensor& expected) {
    QVERIFY2(got.sizes() == expected.sizes(), what.c_str());
    const auto e = compareTensors(got, expected);
    std::printf("  %-34s max-abs %.3g  rel-L2 %.3g\n", what.c_str(), e.maxAbs, e.relL2);
    QVERIFY2(e.maxAbs <= kMaxAbs && e.relL2 <= kRelL2,
             qPrintable(QString("%1: max-abs %2, rel-L2 %3").arg(q(what)).arg(e.maxAbs).arg(e.relL2)));
  }

  static QString q(const std::string& s) { return QString::fromStdString(s); }

  at::Tensor run(const std::string& c, const at::Tensor& t, WanTrace* trace = nullptr) {
    const std::int64_t fps = io_->tensor(c + ".fps").item<std::int64_t>();
    return model_->forward({io_->tensor(c + ".x")}, t, {io_->tensor(c + ".context")}, trace, fps).at(0);
  }

 private Q_SLOTS:
  void initTestCase() {
    if (!std::filesystem::is_directory(SHOTCHAIN_GOLDEN_DIR))
      QFAIL(qPrintable(QString("golden folder missing: %1").arg(SHOTCHAIN_GOLDEN_DIR)));
    io_ = io::SafetensorsFile::open(golden("skyreels_df_tiny_io.safetensors"));
    const io::WeightSet weights = io::WeightSet::open(golden("skyreels_df_tiny.safetensors"));
    const WanDetection detection = detectWanConfig(weights);
    QVERIFY(detection.problems.empty());
    model_.emplace(WanModel::load(weights, WanLoadOptions{at::kFloat, at::kCPU, AttentionImpl::Auto}));
  }

  void detectedFromTheKeys() {
    // The metadata config is dropped: the fps tensors alone must say "SkyReels-V2 DF".
    const io::WeightSet weights = io::WeightSet::open(golden("skyreels_df_tiny.safetensors"));
    WanDetection d = detectWanConfig(weights);
    QVERIFY(d.config.injectSampleInfo);
    QCOMPARE(d.config.family(), std::string("SkyReels-V2 DF"));
    QVERIFY(d.config.takesPerFrameTimesteps());
    QVERIFY(!WanConfig::preset("tiny").takesPerFrameTimesteps());
    QCOMPARE(WanConfig::preset("tiny").family(), std::string("Wan 2.1 T2V"));
    // A Wan config's JSON does not change (shipped configs and shot keys stay what they were).
    QVERIFY(WanConfig::preset("tiny").toJson().find("inject_sample_info") == std::string::npos);
    WanConfig causal = WanConfig::preset("tiny");
    causal.causalBlockSize = 1;
    causal.diffusionForcing = true;
    const WanConfig back = WanConfig::fromJson(causal.toJson());
    QCOMPARE(back.causalBlockSize, std::int64_t{1});
    QVERIFY(back.diffusionForcing);
    QCOMPARE(back.family(), std::string("Wan 2.1 T2V (diffusion forcing), causal, chunk 1"));
  }

  // A config JSON in a file's metadata is read under the rules of every JSON text: no stack overflow
  // on deep nesting, no key twice.
  void configJsonIsReadStrictly() {
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    QVERIFY_EXCEPTION_THROWN(WanConfig::fromJson(deep), std::invalid_argument);
    try {
      WanConfig::fromJson(R"({"dim": 64, "dim": 128})");
      QFAIL("a duplicate key was accepted");
    } catch (const std::invalid_argument& error) {
      QVERIFY2(std::string(error.what()).find("duplicate key") != std::string::npos, error.what());
    }
  }

  void perFrameCases() {
    check("df1.out", run("df1", io_->tensor("df1.t")), io_->tensor("df1.out"));
    check("df2.out", run("df2", io_->tensor("df2.t")), io_->tensor("df2.out"));
  }

  void intermediates() {
    WanTrace trace;
    run("df1", io_->tensor("df1.t"), &trace);
    for (const char* name :
         {"patch_embedding", "time_embedding", "time_projection", "fps_projection", "text_embedding",
          "blocks.0.self_attn", "blocks.0.cross_attn", "blocks.0.ffn", "blocks.0", "blocks.1", "head"}) {
      QVERIFY2(trace.contains(name), name);
      check(std::string("df1.inter.") + name, trace.at(name), io_->tensor(std::string("df1.inter.") + name));
    }
  }

  void equalPerFrameTimestepsAreTheScalarPath() {
    const at::Tensor scalar = run("uni", io_->tensor("uni.t_scalar"));
    const at::Tensor perFrame = run("uni", io_->tensor("uni.t_perframe"));
    check("uni.out_scalar_t", scalar, io_->tensor("uni.out_scalar_t"));
    check("uni.out_perframe_t", perFrame, io_->tensor("uni.out_perframe_t"));
    QVERIFY(at::equal(scalar, perFrame));
    // A batch whose rows differ takes the per-frame path for both; the uniform row still equals its scalar result.
    const at::Tensor x = io_->tensor("uni.x"), ctx = io_->tensor("uni.context");
    const at::Tensor mixed =
        model_->forwardBatch(at::stack({x, x}), at::tensor({637.0f, 637.0f, 637.0f, 0.0f, 500.0f, 999.0f}).view({2, 3}),
                             at::stack({ctx, ctx}), 1);
    QVERIFY(compareTensors(mixed[0], scalar).maxAbs <= 1e-5);
  }

  void blockCausalAttention() {
    const std::int64_t block = io_->tensor("causal.causal_block_size").item<std::int64_t>();
    model_->setCausalBlockSize(block);
    const at::Tensor out = run("causal", io_->tensor("causal.t"));
    check("causal.out", out, io_->tensor("causal.out"));
    // Changing the frames after the first block leaves the first block's output bitwise unchanged.
    at::Tensor x = io_->tensor("causal.x").clone();
    x.narrow(1, block, x.size(1) - block).normal_();
    const at::Tensor changed =
        model_->forward({x}, io_->tensor("causal.t"), {io_->tensor("causal.context")}, nullptr, 1).at(0);
    QVERIFY(at::equal(changed.narrow(1, 0, block), out.narrow(1, 0, block)));
    QVERIFY(!at::equal(changed.narrow(1, block, 1), out.narrow(1, block, 1)));
    model_->setAttention(AttentionImpl::Blocked);
    check("causal.out (blocked attention)", run("causal", io_->tensor("causal.t")), io_->tensor("causal.out"));
    model_->setAttention(AttentionImpl::Auto);
    model_->setCausalBlockSize(0);
    const auto full = compareTensors(run("causal", io_->tensor("causal.t")), io_->tensor("causal.out"));
    QVERIFY2(full.relL2 > 0.01, "full attention should differ from the block-causal reference");
  }

  void fpsEmbeddingCounts() {
    QCOMPARE(wanFpsIndex(16.0), std::int64_t{0});
    QCOMPARE(wanFpsIndex(24.0), std::int64_t{1});
    const at::Tensor t = io_->tensor("df1.t");
    const at::Tensor other = model_->forward({io_->tensor("df1.x")}, t, {io_->tensor("df1.context")}, nullptr, 0).at(0);
    const auto e = compareTensors(other, io_->tensor("df1.out"));
    std::printf("  fps index 0 instead of 1: rel-L2 %.3f\n", e.relL2);
    QVERIFY2(e.relL2 > 0.05, "the fps index must change the output (11 % in the reference)");
  }

  void timestepMatrices() {
    const auto file = io::SafetensorsFile::open(golden("skyreels_timestep_matrix_io.safetensors"));
    const auto calls = nlohmann::json::parse(file->header().metadata.at("calls"));
    QCOMPARE(calls.size(), std::size_t{6});
    for (const auto& [name, call] : calls.items()) {
      const sampling::FlowSchedule schedule =
          sampling::flowMatchingSchedule(call.at("steps").get<int>(), call.at("shift").get<double>());
      QVERIFY2(at::equal(at::tensor(schedule.timesteps, at::TensorOptions().dtype(at::kLong)),
                         file->tensor(name + ".step_template")),
               name.c_str());
      sampling::TimestepMatrixRequest r;
      r.frames = call.at("num_frames").get<std::int64_t>();
      r.baseFrames = call.at("base_num_frames").get<std::int64_t>();
      r.arStep = call.at("ar_step").get<std::int64_t>();
      r.readyFrames = call.at("num_pre_ready").get<std::int64_t>();
      r.causalBlockSize = call.at("causal_block_size").get<std::int64_t>();
      const sampling::TimestepMatrix m = sampling::diffusionForcingMatrix(schedule.timesteps, r);
      std::vector<std::int64_t> update(m.update.begin(), m.update.end()), intervals;
      for (const auto& [start, end] : m.validInterval) intervals.insert(intervals.end(), {start, end});
      QVERIFY2(at::equal(longTable(m.timesteps, m.rows(), m.frames), file->tensor(name + ".step_matrix")),
               name.c_str());
      QVERIFY2(at::equal(longTable(m.stepIndex, m.rows(), m.frames), file->tensor(name + ".step_index")), name.c_str());
      QVERIFY2(at::equal(longTable(update, m.rows(), m.frames), file->tensor(name + ".step_update_mask")),
               name.c_str());
      QVERIFY2(at::equal(longTable(intervals, m.rows(), 2), file->tensor(name + ".valid_interval")), name.c_str());
      std::printf("  %s: %lld iterations × %lld frames, exact\n", name.c_str(), static_cast<long long>(m.rows()),
                  static_cast<long long>(m.frames));
    }
    sampling::TimestepMatrixRequest tooSlow;
    tooSlow.frames = 21;
    tooSlow.baseFrames = 9;
    tooSlow.arStep = 1;
    QVERIFY_EXCEPTION_THROWN(
        sampling::diffusionForcingMatrix(sampling::flowMatchingSchedule(30, 8.0).timesteps, tooSlow),
        std::invalid_argument);
  }

  void verifyVerb() {
    QProcess process;
    process.start(SHOTCHAIN_CLI, {"verify", QString::fromStdString(golden("skyreels_df_tiny.safetensors").string()),
                                  QString::fromStdString(golden("skyreels_df_tiny_io.safetensors").string())});
    QVERIFY(process.waitForFinished(120000));
    QString out = QString::fromUtf8(process.readAllStandardOutput());
    QVERIFY2(process.exitCode() == 0, qPrintable(out + process.readAllStandardError()));
    for (const char* name :
         {"df1.out", "df2.out", "causal.out", "uni.out_scalar_t", "uni.out_perframe_t", "df1.inter.head"})
      QVERIFY2(out.contains(name), qPrintable(out));
    process.start(SHOTCHAIN_CLI,
                  {"verify", QString::fromStdString(golden("skyreels_timestep_matrix_io.safetensors").string())});
    QVERIFY(process.waitForFinished(120000));
    out = QString::fromUtf8(process.readAllStandardOutput());
    QVERIFY2(process.exitCode() == 0, qPrintable(out + process.readAllStandardError()));
    QVERIFY2(out.contains("30 compared, 0 failed: PASS"), qPrintable(out));
  }
};

SHOTCHAIN_TEST(TestSkyreelsGolden, Appless)
#include "test_skyreels_golden.moc"
