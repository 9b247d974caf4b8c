#include <QTest>

#include <functional>
#include <limits>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "bad_documents.h"
#include "sequence/continuity_modes.h"
#include "sequence/sequence_io.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using namespace shotchain::testing;
using Json = nlohmann::ordered_json;

namespace {

Json baseDocument() {
  return Json::parse(R"({
    "schema": "shotchain.sequence/1",
    "name": "Base",
    "fps": 16,
    "model": "builtin:demo",
    "sampler": {"steps": 20, "guidance": 4.0, "shift": 3.0, "solver": "unipc"},
    "memory": {"policy": "auto", "budget": "16GiB", "allocator_tuning": true},
    "shots": [
      {"id": "a", "name": "A", "prompt": "a red circle", "frames": 17, "width": 64, "height": 64, "seed": 1,
       "continuity": {"mode": "none", "tag": "main"}},
      {"id": "b", "name": "B", "prompt": "a red circle", "frames": 17, "width": 64, "height": 64, "seed": 2,
       "continuity": {"mode": "latent", "tag": "main"}},
      {"id": "c", "name": "C", "prompt": "a red circle", "frames": 17, "width": 64, "height": 64, "seed": 3,
       "continuity": {"mode": "latent_overlap", "tag": "main", "overlap_latents": 2}}
    ]
  })");
}

using Mutation = std::function<void(Json&)>;

}  // namespace

Q_DECLARE_METATYPE(Mutation)

class SequenceValidation : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  // One row per mode: the names round-trip, the fields a mode does not read draw the warning, and
  // the geometry is the one the handoff builds (held slots = handed tail + what is encoded).
  void continuityModeTableIsComplete() {
    std::set<std::string> names;
    for (const ContinuityModeTraits& traits : continuityModes()) {
      QVERIFY(names.insert(traits.name).second);
      QCOMPARE(continuityModeFromString(traits.name), std::optional<ContinuityMode>(traits.mode));
      QCOMPARE(std::string(toString(traits.mode)), std::string(traits.name));
      QCOMPARE(&traitsOf(traits.mode), &traits);
      Continuity c;
      c.mode = traits.mode;
      c.overlapLatents = 3;
      c.prefixFrames = 2;
      const ContinuityGeometry g = continuityGeometry(c);
      QCOMPARE(g.handedTailLatents > 0, traits.handoff);
      if (traits.readsRecache) {  // stream: the handoff is the KV cache, nothing is held; one latent fewer
        QCOMPARE(g.heldLatents, 0);
        QCOMPARE(g.extraLatents, -1);
        continue;
      }
      if (traits.readsMotion) {  // svi: the handed latents go into the image condition; one latent's frames repeat
        QCOMPARE(g.heldLatents, 0);
        QCOMPARE(g.extraLatents, 0);
        QCOMPARE(g.droppedLatentFrames, 1);
        continue;
      }
      QCOMPARE(g.heldLatents, g.handedTailLatents + (traits.needsLastFrame && traits.readsOverlap ? 1 : 0));
      QVERIFY(g.extraLatents < std::max(1, g.heldLatents));
    }
    QCOMPARE(names.size(), std::size_t{7});
    Continuity overlap;
    overlap.mode = ContinuityMode::LatentOverlap;
    overlap.overlapLatents = 3;
    QCOMPARE(continuityGeometry(overlap).extraLatents, 3);
    Continuity latent;
    latent.mode = ContinuityMode::Latent;
    latent.prefixFrames = 4;
    QCOMPARE(continuityGeometry(latent).heldLatents, 4);
    QCOMPARE(continuityGeometry(latent).extraLatents, 3);
    QCOMPARE(continuityGeometry(latent).decodePrefixLatents, 1);
  }

  void baseDocumentIsValid() {
    const LoadResult result = parseSequence(baseDocument().dump());
    QVERIFY2(result.ok() && result.diagnostics.empty(), formatAll(result.diagnostics).c_str());
  }

  // Each bad input must be refused with an error whose path names the field and whose text
  // names the rule.
  void badFieldIsNamed_data() {
    QTest::addColumn<Mutation>("mutate");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("message");
    auto row = [](const char* name, Mutation m, const char* path, const char* message) {
      QTest::newRow(name) << m << QString(path) << QString(message);
    };
    row(
        "frames zero", [](Json& d) { d["shots"][0]["frames"] = 0; }, "shots[0].frames", "outside 1..1025");
    row(
        "frames negative", [](Json& d) { d["shots"][0]["frames"] = -3; }, "shots[0].frames", "outside 1..1025");
    row(
        "frames too many", [](Json& d) { d["shots"][0]["frames"] = 4097; }, "shots[0].frames", "outside 1..1025");
    row(
        "frames fractional", [](Json& d) { d["shots"][1]["frames"] = 17.5; }, "shots[1].frames",
        "must be a whole number");
    row(
        "frames a string", [](Json& d) { d["shots"][1]["frames"] = "17"; }, "shots[1].frames",
        "must be a whole number, not a string");
    row(
        "frames missing", [](Json& d) { d["shots"][1].erase("frames"); }, "shots[1].frames", "missing (required)");
    row(
        "width too large", [](Json& d) { d["shots"][0]["width"] = 8192; }, "shots[0].width", "outside 16..4096");
    row(
        "height zero", [](Json& d) { d["shots"][0]["height"] = 0; }, "shots[0].height", "outside 16..4096");
    row(
        "seed negative", [](Json& d) { d["shots"][0]["seed"] = -1; }, "shots[0].seed", "is negative");
    row(
        "seed beyond 64 bits", [](Json& d) { d["shots"][0]["seed"] = Json::parse("18446744073709551616"); },
        "shots[0].seed", "does not fit in 64 bits");
    row(
        "seed fractional", [](Json& d) { d["shots"][0]["seed"] = 1.5; }, "shots[0].seed", "must be a whole number");
    row(
        "blend ratio above 1", [](Json& d) { d["shots"][1]["continuity"]["blend_ratio"] = 1.5; },
        "shots[1].continuity.blend_ratio", "outside [0, 1]");
    row(
        "blend ratio negative", [](Json& d) { d["shots"][1]["continuity"]["blend_ratio"] = -0.1; },
        "shots[1].continuity.blend_ratio", "outside [0, 1]");
    row(
        "fps zero", [](Json& d) { d["fps"] = 0; }, "fps", "must be greater than 0");
    row(
        "fps negative", [](Json& d) { d["fps"] = -24; }, "fps", "must be greater than 0");
    row(
        "fps a string", [](Json& d) { d["fps"] = "24"; }, "fps", "must be a number, not a string");
    row(
        "empty tag with handoff", [](Json& d) { d["shots"][1]["continuity"]["tag"] = ""; }, "shots[1].continuity.tag",
        "must not be empty when the mode is latent");
    row(
        "unknown continuity mode", [](Json& d) { d["shots"][1]["continuity"]["mode"] = "teleport"; },
        "shots[1].continuity.mode", "\"teleport\" is not one of");
    row(
        "duplicate shot id", [](Json& d) { d["shots"][2]["id"] = "a"; }, "shots[2].id", "used by an earlier shot");
    row(
        "empty shot id", [](Json& d) { d["shots"][1]["id"] = ""; }, "shots[1].id", "must not be empty");
    row(
        "shot id with slash", [](Json& d) { d["shots"][1]["id"] = "../x"; }, "shots[1].id", "only letters, digits");
    row(
        "overlap zero", [](Json& d) { d["shots"][2]["continuity"]["overlap_latents"] = 0; },
        "shots[2].continuity.overlap_latents", "at least 1");
    row(
        "steps zero", [](Json& d) { d["sampler"]["steps"] = 0; }, "sampler.steps", "outside 1..1000");
    row(
        "shot steps too many", [](Json& d) { d["shots"][0]["steps"] = 5000; }, "shots[0].steps", "outside 1..1000");
    row(
        "guidance negative", [](Json& d) { d["sampler"]["guidance"] = -1; }, "sampler.guidance", "outside 0..50");
    row(
        "shot shift zero", [](Json& d) { d["shots"][0]["shift"] = 0; }, "shots[0].shift", "greater than 0");
    row(
        "unknown solver", [](Json& d) { d["sampler"]["solver"] = "dpm++"; }, "sampler.solver",
        "\"dpm++\" is not one of euler, unipc");
    row(
        "unknown policy", [](Json& d) { d["memory"]["policy"] = "yolo"; }, "memory.policy", "\"yolo\" is not one of");
    row(
        "budget not a size", [](Json& d) { d["memory"]["budget"] = "lots"; }, "memory.budget", "is not a size");
    row(
        "budget too small", [](Json& d) { d["memory"]["budget"] = "1MiB"; }, "memory.budget", "below the smallest");
    row(
        "allocator tuning not bool", [](Json& d) { d["memory"]["allocator_tuning"] = "yes"; },
        "memory.allocator_tuning", "must be true or false");
    row(
        "unknown builtin model", [](Json& d) { d["model"] = "builtin:sora"; }, "model", "not a built-in model");
    row(
        "model path string", [](Json& d) { d["model"] = "/models/wan.safetensors"; }, "model", "is not a model");
    row(
        "model object incomplete",
        [](Json& d) {
          d["model"] = {{"dit", "dit.safetensors"}};
        },
        "model.vae", "missing: give a \"folder\" or all of dit, vae and text_encoder");
    row(
        "model wrong type", [](Json& d) { d["model"] = 3; }, "model", "not a whole number");
    row(
        "prompt not a string", [](Json& d) { d["shots"][0]["prompt"] = 42; }, "shots[0].prompt", "must be a string");
    row(
        "enabled not bool", [](Json& d) { d["shots"][0]["enabled"] = 1; }, "shots[0].enabled", "true or false");
    row(
        "shot not an object", [](Json& d) { d["shots"][1] = "b"; }, "shots[1]", "must be an object, not a string");
    row(
        "shots not an array", [](Json& d) { d["shots"] = Json::object(); }, "shots", "must be an array");
    row(
        "shots missing", [](Json& d) { d.erase("shots"); }, "shots", "missing (required)");
    row(
        "continuity not an object", [](Json& d) { d["shots"][0]["continuity"] = "latent"; }, "shots[0].continuity",
        "must be an object");
    row(
        "prefix frames zero", [](Json& d) { d["shots"][1]["continuity"]["prefix_frames"] = 0; },
        "shots[1].continuity.prefix_frames", "must be at least 1");
    row(
        "condition noise beyond a timestep", [](Json& d) { d["shots"][1]["continuity"]["condition_noise"] = 1000; },
        "shots[1].continuity.condition_noise", "outside 0..999");
    row(
        "ar_step negative", [](Json& d) { d["sampler"]["ar_step"] = -1; }, "sampler.ar_step", "outside 0..");
    row(
        "stream window zero", [](Json& d) { d["sampler"]["stream_window"] = 0; }, "sampler.stream_window",
        "outside 1..1024");
    row(
        "recache not bool", [](Json& d) { d["shots"][1]["continuity"]["recache"] = "yes"; },
        "shots[1].continuity.recache", "true or false");
    row(
        "cache policy unknown",
        [](Json& d) {
          d["sampler"]["cache"] = {{"policy", "fastcache"}};
        },
        "sampler.cache.policy", "\"fastcache\" is not one of off, teacache, magcache, easycache, first_block");
    row(
        "cache threshold zero",
        [](Json& d) {
          d["sampler"]["cache"] = {{"policy", "teacache"}, {"threshold", 0}};
        },
        "sampler.cache.threshold", "0 must be greater than 0 and at most 10");
    row(
        "cache threshold too large",
        [](Json& d) {
          d["shots"][1]["cache"] = {{"policy", "easycache"}, {"threshold", 11}};
        },
        "shots[1].cache.threshold", "11 must be greater than 0 and at most 10");
    row(
        "cache threshold a string",
        [](Json& d) {
          d["shots"][0]["cache"] = {{"policy", "magcache"}, {"threshold", "0.1"}};
        },
        "shots[0].cache.threshold", "must be a number, not a string");
    row(
        "cache not an object", [](Json& d) { d["sampler"]["cache"] = "teacache"; }, "sampler.cache",
        "must be an object, not a string");
    // A value just past a limit is quoted as it is, never rounded into the range it breaks.
    row(
        "blend ratio just above 1", [](Json& d) { d["shots"][1]["continuity"]["blend_ratio"] = 1.0000001; },
        "shots[1].continuity.blend_ratio", "1.0000001 is outside [0, 1]");
    row(
        "LoRA strength just above 10",
        [](Json& d) {
          d["shots"][0]["loras"] = Json::array({{{"file", "style.safetensors"}, {"strength", 10.0000001}}});
        },
        "shots[0].loras[0].strength", "10.0000001 is outside -10..10");
    // A few-step schedule without its steps was once few-step off without a word; a huge step once showed as -1.
    row(
        "few-step update without steps",
        [](Json& d) {
          d["sampler"]["few_step"] = {{"update", "renoise"}};
        },
        "sampler.few_step.steps", "missing: a few-step schedule needs its steps");
    row(
        "few-step empty steps",
        [](Json& d) {
          d["sampler"]["few_step"] = {{"steps", Json::array()}};
        },
        "sampler.few_step.steps", "is empty: a few-step schedule needs its steps");
    row(
        "few-step step past int64",
        [](Json& d) {
          d["shots"][0]["few_step"] = {{"steps", Json::array({std::numeric_limits<std::uint64_t>::max()})}};
        },
        "shots[0].few_step.steps[0]", "18446744073709551615 must be a whole number in 1..1000");
    row(
        "schema missing", [](Json& d) { d.erase("schema"); }, "schema", "missing; expected \"shotchain.sequence/1\"");
    row(
        "schema from the future", [](Json& d) { d["schema"] = "shotchain.sequence/2"; }, "schema",
        "newer or unknown ShotChain");
    row(
        "schema of something else", [](Json& d) { d["schema"] = "comfyui.workflow/1"; }, "schema",
        "not a ShotChain sequence");
  }

  void badFieldIsNamed() {
    QFETCH(Mutation, mutate);
    QFETCH(QString, path);
    QFETCH(QString, message);
    Json doc = baseDocument();
    mutate(doc);
    const LoadResult result = parseSequence(doc.dump());
    QVERIFY2(!result.ok(), "a bad document was accepted");
    bool found = false;
    for (const Diagnostic& d : result.diagnostics)
      found = found || (d.isError() && q(d.path) == path && q(d.message).contains(message));
    QVERIFY2(found, ("expected " + path.toStdString() + ": " + message.toStdString() + "\ngot:\n" +
                     formatAll(result.diagnostics, "doc.json"))
                        .c_str());
  }

  void messageNamesFilePathAndRule() {
    Json doc = baseDocument();
    doc["shots"][2]["width"] = 8192;
    QTemporaryDir dir;
    const std::string file = dir.filePath("demo.json").toStdString();
    writeFile(file, doc.dump(2));
    const LoadResult result = loadSequenceFile(file);
    QVERIFY(!result.ok());
    QCOMPARE(q(result.diagnostics.front().format("demo.json")),
             QString("demo.json: shots[2].width: 8192 is outside 16..4096 pixels"));
  }

  void everyErrorIsReportedNotJustTheFirst() {
    Json doc = baseDocument();
    doc["fps"] = 0;
    doc["shots"][0]["width"] = 8192;
    doc["shots"][1]["frames"] = 0;
    doc["shots"][2]["continuity"]["blend_ratio"] = 2;
    const LoadResult result = parseSequence(doc.dump());
    int errors = 0;
    for (const Diagnostic& d : result.diagnostics) errors += d.isError();
    QCOMPARE(errors, 4);
  }

  void typeErrorsAndRuleErrorsAreReportedTogether() {
    Json doc = baseDocument();
    doc["fps"] = "24";
    doc["shots"][1]["frames"] = 0;
    doc["shots"][2].erase("id");
    const LoadResult result = parseSequence(doc.dump());
    QStringList paths;
    for (const Diagnostic& d : result.diagnostics) paths << q(d.path);
    QCOMPARE(paths, (QStringList{"fps", "shots[2].id", "shots[1].frames"}));
  }

  void truncatedFileSaysTruncated() {
    const std::string text = baseDocument().dump(2);
    const LoadResult result = parseSequence(text.substr(0, text.size() / 2));
    QVERIFY(!result.ok());
    QVERIFY2(q(result.diagnostics.front().message).contains("truncated"), result.diagnostics.front().message.c_str());
    QVERIFY(q(result.diagnostics.front().message).startsWith("line "));
  }

  void nonJsonSaysWhereItBreaks() {
    const LoadResult result = parseSequence("{\n  \"schema\": \"shotchain.sequence/1\",\n  fps: 16\n}");
    QVERIFY(!result.ok());
    QVERIFY2(q(result.diagnostics.front().message).startsWith("line 3, column "),
             result.diagnostics.front().message.c_str());
  }

  void emptyAndBinaryFilesAreNamedAsSuch() {
    QVERIFY(q(parseSequence("").diagnostics.front().message).contains("empty"));
    QVERIFY(q(parseSequence("  \n ").diagnostics.front().message).contains("empty"));
    const std::string binary("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16);
    QVERIFY(q(parseSequence(binary).diagnostics.front().message).contains("binary file"));
  }

  void topLevelArrayIsRefused() {
    const LoadResult result = parseSequence("[1, 2, 3]");
    QVERIFY(q(result.diagnostics.front().message).contains("must be a JSON object, not an array"));
  }

  void missingFileIsNamed() {
    const LoadResult result = loadSequenceFile("/nonexistent/folder/seq.json");
    QVERIFY(!result.ok());
    QCOMPARE(q(result.diagnostics.front().message), QString("no such file"));
  }

  void missingFallbackImageIsAWarningAtLoad() {
    Json doc = baseDocument();
    doc["shots"][1]["continuity"]["mode"] = "blend";
    doc["shots"][1]["continuity"]["fallback_image"] = "refs/missing.png";
    QTemporaryDir dir;
    const std::string file = dir.filePath("s.json").toStdString();
    writeFile(file, doc.dump());
    LoadResult result = loadSequenceFile(file);
    QVERIFY(result.ok());
    QCOMPARE(result.diagnostics.size(), std::size_t(1));
    QCOMPARE(q(result.diagnostics[0].path), QString("shots[1].continuity.fallback_image"));
    QVERIFY(!result.diagnostics[0].isError());

    QDir(dir.path()).mkpath("refs");
    writeFile(dir.filePath("refs/missing.png").toStdString(), kTinyPng);
    result = loadSequenceFile(file);
    QVERIFY(result.ok());
    QVERIFY2(result.diagnostics.empty(), formatAll(result.diagnostics).c_str());
  }

  void handoffWithoutPredecessorIsAWarning() {
    Json doc = baseDocument();
    doc["shots"][0]["continuity"]["mode"] = "latent";
    const LoadResult result = parseSequence(doc.dump());
    QVERIFY(result.ok());
    QCOMPARE(result.diagnostics.size(), std::size_t(1));
    QCOMPARE(q(result.diagnostics[0].path), QString("shots[0].continuity.mode"));
  }

  // Fields a stream shot does not read say so instead of being ignored silently.
  void streamShotsSayWhatTheyDoNotRead() {
    Json doc = baseDocument();
    doc["shots"][1]["continuity"]["mode"] = "stream";
    doc["shots"][1]["continuity"]["condition_noise"] = 20;
    doc["sampler"]["ar_step"] = 5;
    const LoadResult result = parseSequence(doc.dump());
    QVERIFY(result.ok());
    QString all = q(formatAll(result.diagnostics));
    QVERIFY2(all.contains("shots[1].continuity.condition_noise: warning: is not applied to stream shots"),
             qPrintable(all));
    QVERIFY2(all.contains("sampler.ar_step: warning: is not applied to stream shots (shot 2)"), qPrintable(all));
    doc["shots"][1]["continuity"]["mode"] = "latent";
    all = q(formatAll(parseSequence(doc.dump()).diagnostics));
    QVERIFY2(!all.contains("not applied to stream shots"), qPrintable(all));
  }

  void failedLoadNeverTouchesTheFile() {
    Json doc = baseDocument();
    doc["shots"][0]["frames"] = 0;
    QTemporaryDir dir;
    const std::string file = dir.filePath("bad.json").toStdString();
    const std::string text = doc.dump(2);
    writeFile(file, text);
    const auto before = std::filesystem::last_write_time(file);
    QVERIFY(!loadSequenceFile(file).ok());
    QCOMPARE(readFile(file), text);
    QVERIFY(std::filesystem::last_write_time(file) == before);
  }
};

SHOTCHAIN_TEST(SequenceValidation, Appless)
#include "test_sequence_validation.moc"
