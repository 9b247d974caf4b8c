#include <QTest>

#include <nlohmann/json.hpp>

#include "edit_checks.h"
#include "sequence/sequence_io.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using namespace shotchain::testing;

class SequenceRoundTrip : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void workflowsLoadCleanly_data() {
    QTest::addColumn<QString>("file");
    QTest::newRow("demo") << "demo.json";
    QTest::newRow("demo prompt change") << "demo_prompt_change.json";
    QTest::newRow("wan21 five shots") << "wan21_1.3b_five_shots.json";
    QTest::newRow("resolution change") << "resolution_change.json";
    QTest::newRow("skyreels df continuation") << "skyreels_df_continuation.json";
  }

  void workflowsLoadCleanly() {
    QFETCH(QString, file);
    const LoadResult result = loadSequenceFile(workflow(file.toStdString()));
    QVERIFY2(result.ok(), formatAll(result.diagnostics).c_str());
    QVERIFY2(result.diagnostics.empty(), formatAll(result.diagnostics).c_str());
  }

  void demoHasFourShotsContinuingOneObject() {
    const LoadResult result = loadSequenceFile(workflow("demo.json"));
    QVERIFY(result.ok());
    const Sequence& s = *result.sequence;
    QCOMPARE(s.shots.size(), std::size_t(4));
    QVERIFY(s.settings.model.isBuiltin());
    QCOMPARE(s.settings.model.builtin, std::string("demo"));
    for (std::size_t i = 1; i < s.shots.size(); ++i) {
      QVERIFY(usesHandoff(s.shots[i].continuity.mode));
      QCOMPARE(s.shots[i].continuity.tag, s.shots[0].continuity.tag);
    }
  }

  void wanExampleIsFiveShotsAt832x480FromAModelsFolder() {
    const LoadResult result = loadSequenceFile(workflow("wan21_1.3b_five_shots.json"));
    QVERIFY(result.ok());
    QCOMPARE(result.sequence->shots.size(), std::size_t(5));
    QVERIFY(!result.sequence->settings.model.folder.empty());
    for (const Shot& shot : result.sequence->shots) {
      QCOMPARE(shot.width, 832);
      QCOMPARE(shot.height, 480);
    }
  }

  void resolutionChangeExampleChangesResolution() {
    const LoadResult result = loadSequenceFile(workflow("resolution_change.json"));
    QVERIFY(result.ok());
    const auto& shots = result.sequence->shots;
    bool changes = false;
    for (std::size_t i = 1; i < shots.size(); ++i)
      changes = changes || shots[i].width != shots[i - 1].width || shots[i].height != shots[i - 1].height;
    QVERIFY(changes);
  }

  void loadSaveLoadIsIdentical_data() { workflowsLoadCleanly_data(); }

  void loadSaveLoadIsIdentical() {
    QFETCH(QString, file);
    const LoadResult first = loadSequenceFile(workflow(file.toStdString()));
    QVERIFY(first.ok());
    QTemporaryDir dir;
    const std::filesystem::path saved = dir.filePath("saved.json").toStdString();
    saveSequenceFile(*first.sequence, saved);
    const LoadResult second = loadSequenceFile(saved);
    QVERIFY2(second.ok(), formatAll(second.diagnostics).c_str());
    QVERIFY(*first.sequence == *second.sequence);
    QCOMPARE(serializeSequence(*second.sequence), readFile(saved));
  }

  void unknownKeysSurviveASave() {
    auto doc = nlohmann::ordered_json::parse(readFile(workflow("demo.json")));
    doc["director_notes"] = {{"take", 3}, {"mood", "calm"}};
    doc["sampler"]["scheduler_v2"] = "karras";
    doc["memory"]["prefetch_depth"] = 2;
    doc["shots"][1]["camera"] = {{"lens_mm", 35}, {"moves", {"pan", "tilt"}}};
    doc["shots"][2]["continuity"]["anchor_strength"] = 0.25;
    const std::string big = "18446744073709551615";
    doc["shots"][3]["seed"] = nlohmann::ordered_json::parse(big);

    const LoadResult first = parseSequence(doc.dump());
    QVERIFY2(first.ok(), formatAll(first.diagnostics).c_str());
    QCOMPARE(first.sequence->shots[3].seed, std::uint64_t(18446744073709551615ull));
    const auto saved = nlohmann::ordered_json::parse(serializeSequence(*first.sequence));
    QVERIFY(saved["director_notes"] == doc["director_notes"]);
    QVERIFY(saved["sampler"]["scheduler_v2"] == doc["sampler"]["scheduler_v2"]);
    QVERIFY(saved["memory"]["prefetch_depth"] == doc["memory"]["prefetch_depth"]);
    QVERIFY(saved["shots"][1]["camera"] == doc["shots"][1]["camera"]);
    QVERIFY(saved["shots"][2]["continuity"]["anchor_strength"] == doc["shots"][2]["continuity"]["anchor_strength"]);
    QCOMPARE(saved["shots"][3]["seed"].get<std::uint64_t>(), std::uint64_t(18446744073709551615ull));

    const LoadResult second = parseSequence(saved.dump());
    QVERIFY(second.ok());
    QVERIFY(*first.sequence == *second.sequence);
  }

  void anchorColourRoundTripsAndUnknownContinuityKeysStay() {
    auto doc = nlohmann::ordered_json::parse(readFile(workflow("demo.json")));
    doc["shots"][1]["continuity"]["anchor_colour"] = true;
    doc["shots"][1]["continuity"]["anchor_strength"] = 0.5;
    const LoadResult first = parseSequence(doc.dump());
    QVERIFY2(first.ok(), formatAll(first.diagnostics).c_str());
    QVERIFY(first.sequence->shots[1].continuity.anchorColour);
    QVERIFY(!first.sequence->shots[0].continuity.anchorColour);
    QVERIFY(!first.sequence->shots[1].continuity.unknown.count("anchor_colour"));
    const auto saved = nlohmann::ordered_json::parse(serializeSequence(*first.sequence));
    QVERIFY(saved["shots"][1]["continuity"]["anchor_colour"] == true);
    QVERIFY(saved["shots"][1]["continuity"]["anchor_strength"] == 0.5);
    QVERIFY(!saved["shots"][0]["continuity"].contains("anchor_colour"));
    const LoadResult second = parseSequence(saved.dump());
    QVERIFY(second.ok());
    QVERIFY(*first.sequence == *second.sequence);

    doc["shots"][1]["continuity"]["anchor_colour"] = "yes";
    const LoadResult bad = parseSequence(doc.dump());
    QVERIFY(!bad.ok());
    QVERIFY2(formatAll(bad.diagnostics).find("shots[1].continuity.anchor_colour") != std::string::npos,
             formatAll(bad.diagnostics).c_str());
  }

  void modelFilesAndBudgetRoundTrip() {
    Sequence s;
    s.settings.model.builtin.clear();
    s.settings.model.dit = "dit.safetensors";
    s.settings.model.vae = "vae.safetensors";
    s.settings.model.textEncoder = "umt5.safetensors";
    s.settings.memoryBudgetBytes = (3ull << 30) + 12345;
    s.settings.policy = ResidencyPolicy::Offload;
    s.settings.sampler.solver = Solver::Euler;
    Shot shot;
    shot.id = "a";
    shot.prompt = "p";
    shot.steps = 12;
    shot.guidance = 0.0;
    shot.shift = 1.5;
    shot.enabled = false;
    s.shots.push_back(shot);
    const std::string plain = serializeSequence(s);
    for (const char* field : {"prefix_frames", "condition_noise", "ar_step", "recache", "stream_window"})
      QVERIFY2(plain.find(field) == std::string::npos, field);  // unset: not written, old files stay byte-identical
    s.settings.sampler.arStep = 3;
    s.shots[0].continuity.mode = ContinuityMode::Latent;
    s.shots[0].continuity.prefixFrames = 2;
    s.shots[0].continuity.conditionNoise = 20;
    const LoadResult back = parseSequence(serializeSequence(s));
    QVERIFY2(back.ok(), formatAll(back.diagnostics).c_str());
    QVERIFY(*back.sequence == s);
    s.settings.sampler.streamWindow = 12;
    s.shots[0].continuity.mode = ContinuityMode::Stream;
    s.shots[0].continuity.recache = false;
    const LoadResult streamed = parseSequence(serializeSequence(s));
    QVERIFY2(streamed.ok(), formatAll(streamed.diagnostics).c_str());
    QVERIFY(*streamed.sequence == s);
  }

  void keyframesAndSviRoundTrip() {
    Sequence s = demoSequence();
    s.shots[0].endImage = "key.png";
    s.shots[1].startImage = "key.png";
    s.shots[1].continuity.mode = ContinuityMode::Svi;
    s.shots[1].continuity.motionLatents = 2;
    s.shots[1].continuity.anchorImage = "anchor.png";
    const LoadResult back = parseSequence(serializeSequence(s));
    QVERIFY(back.sequence && *back.sequence == s);
    const std::string text = serializeSequence(s);
    QVERIFY(text.find("\"end_image\": \"key.png\"") != std::string::npos);
    QVERIFY(text.find("\"mode\": \"svi\"") != std::string::npos);
    QVERIFY(text.find("\"motion_latents\": 2") != std::string::npos);
  }

  // sampler.cache and a shot's cache: written only when set, read back equal, unknown keys kept.
  void stepCacheRoundTrips() {
    Sequence s;
    Shot shot;
    shot.id = "a";
    shot.prompt = "p";
    s.shots = {shot, shot};
    s.shots[1].id = "b";
    QVERIFY(serializeSequence(s).find("cache") == std::string::npos);
    s.settings.sampler.cache.policy = StepCachePolicy::MagCache;
    s.settings.sampler.cache.threshold = 0.12;
    s.settings.sampler.cache.calibration = "wan.cache.json";
    s.settings.sampler.cache.unknown["later"] = "7";
    s.shots[1].cache = StepCacheSettings{};  // this shot off, whatever the sequence says
    const std::string text = serializeSequence(s);
    const LoadResult back = parseSequence(text);
    QVERIFY2(back.ok(), formatAll(back.diagnostics).c_str());
    QVERIFY(*back.sequence == s);
    QVERIFY(!back.sequence->shots[0].cache.has_value());
    QCOMPARE(back.sequence->shots[1].cache->policy, StepCachePolicy::Off);
    QVERIFY(text.find("\"later\": 7") != std::string::npos || text.find("\"later\":7") != std::string::npos);
    for (const StepCachePolicy policy : {StepCachePolicy::Off, StepCachePolicy::TeaCache, StepCachePolicy::MagCache,
                                         StepCachePolicy::EasyCache, StepCachePolicy::FirstBlock})
      QCOMPARE(*stepCachePolicyFromString(toString(policy)), policy);
  }
};

SHOTCHAIN_TEST(SequenceRoundTrip, Appless)
#include "test_sequence_roundtrip.moc"
