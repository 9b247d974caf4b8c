#include <QTest>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <ATen/ATen.h>

#include "io/safetensors_reader.h"
#include "sampling/flow_schedule.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using namespace shotchain::sampling;
using shotchain::testing::errorOf;
using shotchain::testing::golden;

namespace {

// Distance in float32 units in the last place (same sign, finite values).
std::int64_t ulpDistance(float a, float b) {
  std::int32_t ia = 0, ib = 0;
  std::memcpy(&ia, &a, sizeof a);
  std::memcpy(&ib, &b, sizeof b);
  return std::llabs(static_cast<long long>(ia) - static_cast<long long>(ib));
}

}  // namespace

class TestFlowSchedule : public QObject {
  Q_OBJECT

  std::shared_ptr<const io::SafetensorsFile> io_;

  void compareWithGolden(const std::string& prefix, int steps, ScheduleKind kind) {
    const FlowSchedule s = flowMatchingSchedule(steps, 5.0, kind);
    const at::Tensor sigmas = io_->tensor(prefix + ".sigmas").contiguous();
    const at::Tensor sigmasF64 = io_->tensor(prefix + ".sigmas_f64").contiguous();
    const at::Tensor timesteps = io_->tensor(prefix + ".timesteps").contiguous();
    const at::Tensor timestepsF64 = io_->tensor(prefix + ".timesteps_f64").contiguous();
    QCOMPARE(sigmas.numel(), std::int64_t{steps + 1});
    QCOMPARE(static_cast<std::int64_t>(s.sigmas.size()), sigmas.numel());
    QCOMPARE(s.steps(), steps);
    std::int64_t timestepMismatches = 0, worstUlp = 0;
    double worstF64 = 0, worstT64 = 0;
    for (int i = 0; i < steps; ++i) {
      if (s.timesteps[static_cast<std::size_t>(i)] != timesteps[i].item<std::int64_t>()) ++timestepMismatches;
      worstF64 = std::max(worstF64, std::abs(s.sigmasF64[static_cast<std::size_t>(i)] - sigmasF64[i].item<double>()));
      worstT64 =
          std::max(worstT64, std::abs(s.timestepsF64[static_cast<std::size_t>(i)] - timestepsF64[i].item<double>()));
    }
    for (int i = 0; i <= steps; ++i)
      worstUlp = std::max(worstUlp, ulpDistance(s.sigmas[static_cast<std::size_t>(i)], sigmas[i].item<float>()));
    std::printf("  %-24s timestep mismatches %lld, sigma_f64 max|d| %.3g, t_f64 max|d| %.3g, sigma f32 max ulp %lld\n",
                prefix.c_str(), static_cast<long long>(timestepMismatches), worstF64, worstT64,
                static_cast<long long>(worstUlp));
    QCOMPARE(timestepMismatches, std::int64_t{0});  // exact
    QCOMPARE(worstF64, 0.0);                        // computed in double as described: exact
    QCOMPARE(worstT64, 0.0);
    QCOMPARE(worstUlp, std::int64_t{0});  // README allows ≤ 1 ulp; we are exact
    QCOMPARE(s.sigmas.back(), 0.0f);
  }

 private Q_SLOTS:
  void initTestCase() {
    if (!std::filesystem::is_directory(SHOTCHAIN_GOLDEN_DIR))
      QFAIL(qPrintable(QString("golden folder missing: %1").arg(SHOTCHAIN_GOLDEN_DIR)));
    io_ = io::SafetensorsFile::open(golden("schedule_io.safetensors"));
  }

  void goldenUniPC10() { compareWithGolden("unipc.steps10.shift5", 10, ScheduleKind::UniPC); }
  void goldenUniPC50() { compareWithGolden("unipc.steps50.shift5", 50, ScheduleKind::UniPC); }
  void goldenDpmPP10() { compareWithGolden("dpmpp.steps10.shift5", 10, ScheduleKind::DpmPP); }
  void goldenDpmPP50() { compareWithGolden("dpmpp.steps50.shift5", 50, ScheduleKind::DpmPP); }

  // wan21.md §4.2 test vectors.
  void specVectorsShift5() {
    const FlowSchedule s = flowMatchingSchedule(50, 5.0);
    const std::vector<std::int64_t> head{999, 995, 991, 987, 982, 978};
    const std::vector<std::int64_t> tail{302, 241, 172, 92};
    for (std::size_t i = 0; i < head.size(); ++i) QCOMPARE(s.timesteps[i], head[i]);
    for (std::size_t i = 0; i < tail.size(); ++i) QCOMPARE(s.timesteps[46 + i], tail[i]);
    const std::vector<double> sHead{0.99980, 0.995732, 0.99153, 0.987187};
    for (std::size_t i = 0; i < sHead.size(); ++i) QVERIFY(std::abs(s.sigmas[i] - sHead[i]) < 5e-6);
    QVERIFY(std::abs(s.sigmas[47] - 0.24174) < 5e-6);
    QVERIFY(std::abs(s.sigmas[48] - 0.172265) < 5e-7);
    QVERIFY(std::abs(s.sigmas[49] - 0.092507) < 5e-7);
    QCOMPARE(s.sigmas[50], 0.0f);
  }

  void specVectorsShift3() {
    const FlowSchedule s = flowMatchingSchedule(50, 3.0);
    const std::vector<std::int64_t> head{999, 992, 985, 978, 971, 963};
    const std::vector<std::int64_t> tail{206, 160, 111, 57};
    for (std::size_t i = 0; i < head.size(); ++i) QCOMPARE(s.timesteps[i], head[i]);
    for (std::size_t i = 0; i < tail.size(); ++i) QCOMPARE(s.timesteps[46 + i], tail[i]);
  }

  // Golden README §4: the 10-step values of both paths.
  void readmeTenStepValues() {
    const FlowSchedule u = flowMatchingSchedule(10, 5.0, ScheduleKind::UniPC);
    const FlowSchedule d = flowMatchingSchedule(10, 5.0, ScheduleKind::DpmPP);
    QCOMPARE(u.timesteps, (std::vector<std::int64_t>{999, 978, 952, 920, 882, 833, 768, 681, 555, 356}));
    QCOMPARE(d.timesteps, (std::vector<std::int64_t>{1000, 978, 952, 921, 882, 833, 769, 681, 555, 357}));
    const std::vector<double> us{0.99980, 0.97805, 0.95215, 0.92081, 0.88209, 0.83306,
                                 0.76893, 0.68151, 0.55525, 0.35689, 0};
    for (std::size_t i = 0; i < us.size(); ++i) QVERIFY(std::abs(u.sigmas[i] - us[i]) < 5e-6);
    QCOMPARE(d.sigmas[0], 1.0f);
  }

  void shiftOneIsLinear() {
    const FlowSchedule s = flowMatchingSchedule(4, 1.0, ScheduleKind::DpmPP);
    QCOMPARE(s.sigmasF64, (std::vector<double>{1.0, 0.75, 0.5, 0.25}));
    QCOMPARE(s.timesteps, (std::vector<std::int64_t>{1000, 750, 500, 250}));
  }

  void linspaceMatchesNumpy() {
    const auto v = linspace(0.9990000128746033, 0.0, 11);
    QCOMPARE(v.size(), std::size_t{11});
    QCOMPARE(v.front(), 0.9990000128746033);
    QCOMPARE(v.back(), 0.0);
    QCOMPARE(linspace(1.0, 0.0, 1), std::vector<double>{1.0});
  }

  void rejectsBadArguments() {
    QVERIFY(errorOf([] { flowMatchingSchedule(0, 5.0); }).contains("at least 1"));
    QVERIFY(errorOf([] { flowMatchingSchedule(10, 0.0); }).contains("shift"));
    QVERIFY(errorOf([] { flowMatchingSchedule(10, -1.0); }).contains("shift"));
    QVERIFY(errorOf([] { flowMatchingSchedule(10, std::nan("")); }).contains("shift"));
  }
};

SHOTCHAIN_TEST(TestFlowSchedule, Core)
#include "test_flow_schedule.moc"
