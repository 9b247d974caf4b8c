#pragma once
// The catalogue of bad sequence documents: each case
// is either refused by `validate` with the JSON path and the rule, or renders. Shared by the
// table-driven CLI test, the studio's Open stress test and the fuzzer's seed corpus
// (write_bad_documents). Std-only, no Qt, no torch.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace shotchain::testing {

enum class Expect {
  Refused,  // validate exits 1 with "FILE: PATH: …RULE…"; render exits 3 before any work
  Warned,   // validate exits 0 with a warning at PATH; render refuses it before any work (exit 4)
  Renders,  // validate says ok and render completes
};

struct BadDocument {
  std::string name;
  Expect expect = Expect::Refused;
  std::string path;  // JSON path the message names ("" for the whole text)
  std::string rule;  // a piece of the message
  // Writes whatever the document refers to into `dir` and returns the document's bytes.
  std::function<std::string(const std::filesystem::path& dir)> write;
  // A rule of the model set (the frames and sizes its geometry takes, …), not of the document: `validate` and
  // `render` refuse it as any other, while the studio opens the document and lists the problem.
  bool modelRule = false;
};

// A 2×2 red PNG (what a fallback image should be).
inline const std::string kTinyPng(
    "\x89\x50\x4e\x47\x0d\x0a\x1a\x0a\x00\x00\x00\x0d\x49\x48\x44\x52\x00\x00\x00\x02\x00\x00\x00\x02\x08\x02\x00\x00"
    "\x00\xfd\xd4\x9a\x73\x00\x00\x00\x10\x49\x44\x41\x54\x78\x9c\x63\x38\x21\x27\x07\x44\x0c\x10\x0a\x00\x1f\x26\x04"
    "\x11\xa2\x8f\x22\xaf\x00\x00\x00\x00\x49\x45\x4e\x44\xae\x42\x60\x82",
    73);

// Two small shots, the second handing off from the first; `model` is the JSON of the model field.
inline nlohmann::ordered_json catalogueBaseDocument(const nlohmann::ordered_json& model) {
  using Json = nlohmann::ordered_json;
  auto shot = [](const char* id, const char* mode, std::uint64_t seed) {
    return Json{{"id", id},
                {"name", std::string("Shot ") + id},
                {"prompt", "a red circle moving right on a black background"},
                {"frames", 5},
                {"width", 32},
                {"height", 32},
                {"seed", seed},
                {"continuity", Json{{"mode", mode}, {"tag", "main"}}}};
  };
  return Json{{"schema", "shotchain.sequence/1"},
              {"name", "catalogue"},
              {"fps", 16},
              {"model", model},
              {"sampler", Json{{"steps", 2}, {"guidance", 5.0}, {"shift", 5.0}, {"solver", "euler"}}},
              {"memory", Json{{"policy", "auto"}, {"budget", nullptr}, {"allocator_tuning", true}}},
              {"shots", Json::array({shot("a", "none", 1), shot("b", "latent", 2)})}};
}

inline std::vector<BadDocument> badDocumentCatalogue(const nlohmann::ordered_json& model) {
  using Json = nlohmann::ordered_json;
  namespace fs = std::filesystem;
  const Json base = catalogueBaseDocument(model);
  const std::string baseText = base.dump(2);
  std::vector<BadDocument> cases;
  // A document changed as JSON.
  auto edited = [&](std::string name, Expect expect, std::string path, std::string rule,
                    std::function<void(Json&)> edit) {
    cases.push_back({std::move(name), expect, std::move(path), std::move(rule), [base, edit](const fs::path&) {
                       Json doc = base;
                       edit(doc);
                       return doc.dump(2);
                     }});
  };
  // A document given as text.
  auto text = [&](std::string name, Expect expect, std::string path, std::string rule, std::string bytes) {
    cases.push_back(
        {std::move(name), expect, std::move(path), std::move(rule), [bytes](const fs::path&) { return bytes; }});
  };
  // A blend shot whose fallback image is whatever `prepare` leaves at the returned path.
  auto fallback = [&](std::string name, Expect expect, std::string rule,
                      std::function<std::string(const fs::path&)> prepare) {
    cases.push_back({std::move(name), expect, "shots[1].continuity.fallback_image", std::move(rule),
                     [base, prepare](const fs::path& dir) {
                       Json doc = base;
                       doc["shots"][1]["continuity"]["mode"] = "blend";
                       doc["shots"][1]["continuity"]["fallback_image"] = prepare(dir);
                       return doc.dump(2);
                     }});
  };
  auto writeBytes = [](const fs::path& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  };

  // The parser: depth, numbers, duplicate keys, what may follow the value, byte-order marks.
  std::string deepObjects = "{\"schema\":\"shotchain.sequence/1\",\"x\":";
  for (int i = 0; i < 100000; ++i) deepObjects += "{\"a\":";
  text("deep_objects", Expect::Refused, "x.a.a", "nested deeper than 64 levels", deepObjects);
  text("deep_arrays", Expect::Refused, "[0][0][0]", "nested deeper than 64 levels", std::string(100000, '['));
  {
    std::string overflow = baseText;
    overflow.replace(overflow.find("\"fps\": 16"), 9, "\"fps\": 1e400");
    text("number_1e400", Expect::Refused, "fps", "a number too large", overflow);
    std::string digits = baseText;
    digits.replace(digits.find("\"frames\": 5"), 11, "\"frames\": " + std::string(100000, '9'));
    text("number_100000_digits", Expect::Refused, "shots[0].frames", "a number too large", digits);
  }
  {
    std::string twice = baseText;
    twice.insert(twice.rfind('}'), ",\n  \"shots\": []\n");
    text("duplicate_shots", Expect::Refused, "shots", "duplicate key \"shots\"", twice);
    std::string inShot = baseText;
    inShot.replace(inShot.find("\"frames\": 5"), 11, "\"frames\": 5, \"frames\": 9");
    text("duplicate_frames", Expect::Refused, "shots[0].frames", "duplicate key \"frames\"", inShot);
  }
  text("nul_then_garbage", Expect::Refused, "", "contains a NUL byte", baseText + std::string("\0garbage", 8));
  text("bom_json_nul_garbage", Expect::Refused, "", "contains a NUL byte",
       "\xEF\xBB\xBF" + baseText + std::string("\0\x01garbage", 9));
  text("text_after_value", Expect::Refused, "", "something other than whitespace follows", baseText + "\n{}\n");
  text("bom_then_valid", Expect::Renders, "", "", "\xEF\xBB\xBF" + baseText);
  text("two_boms", Expect::Refused, "", "byte-order mark is allowed only at the very start",
       "\xEF\xBB\xBF\xEF\xBB\xBF" + baseText);
  text("utf16_bom", Expect::Refused, "", "UTF-16", std::string("\xFF\xFE{\0}\0", 6));
  text("truncated", Expect::Refused, "", "truncated", baseText.substr(0, baseText.size() / 2));
  text("empty", Expect::Refused, "", "the file is empty", "  \n");
  text("binary", Expect::Refused, "", "binary file", kTinyPng);
  text("top_level_array", Expect::Refused, "", "must be a JSON object, not an array", "[1, 2, 3]");
  text("unquoted_key", Expect::Refused, "", "line 3, column 4: not valid JSON",
       "{\n  \"schema\": \"shotchain.sequence/1\",\n  fps: 16\n}");
  edited("schema_newer", Expect::Refused, "schema", "newer or unknown ShotChain",
         [](Json& d) { d["schema"] = "shotchain.sequence/9"; });
  edited("schema_missing", Expect::Refused, "schema", "missing", [](Json& d) { d.erase("schema"); });

  // Fields (the earlier bad-document tests).
  edited("frames_not_4k1", Expect::Refused, "shots[0].frames", "18 is not 4k+1 (try 17 or 21)",
         [](Json& d) { d["shots"][0]["frames"] = 18; });
  cases.back().modelRule = true;
  edited("frames_fraction", Expect::Refused, "shots[0].frames", "must be a whole number",
         [](Json& d) { d["shots"][0]["frames"] = 1.5; });
  edited("frames_huge", Expect::Refused, "shots[0].frames", "far too large",
         [](Json& d) { d["shots"][0]["frames"] = 3000000000ll; });
  edited("width_not_16", Expect::Refused, "shots[0].width", "65 is not a multiple of 16",
         [](Json& d) { d["shots"][0]["width"] = 65; });
  cases.back().modelRule = true;
  edited("height_too_big", Expect::Refused, "shots[0].height", "outside 16..4096",
         [](Json& d) { d["shots"][0]["height"] = 8192; });
  edited("fps_zero", Expect::Refused, "fps", "must be greater than 0", [](Json& d) { d["fps"] = 0; });
  edited("fps_string", Expect::Refused, "fps", "must be a number, not a string", [](Json& d) { d["fps"] = "24"; });
  edited("fps_denormal", Expect::Refused, "fps", "below the lowest frame rate of 1",
         [](Json& d) { d["fps"] = 1e-310; });
  edited("fps_lowest", Expect::Renders, "", "", [](Json& d) { d["fps"] = 1.0; });
  edited("steps_zero", Expect::Refused, "sampler.steps", "outside 1..1000", [](Json& d) { d["sampler"]["steps"] = 0; });
  edited("guidance_huge", Expect::Refused, "sampler.guidance", "outside 0..50",
         [](Json& d) { d["sampler"]["guidance"] = 60; });
  edited("shift_tiny", Expect::Refused, "sampler.shift", "below the smallest shift of 0.1",
         [](Json& d) { d["sampler"]["shift"] = 1e-300; });
  edited("shot_shift_tiny", Expect::Refused, "shots[1].shift", "below the smallest shift",
         [](Json& d) { d["shots"][1]["shift"] = 0.01; });
  edited("shift_lowest", Expect::Renders, "", "", [](Json& d) { d["sampler"]["shift"] = 0.1; });
  edited("solver_unknown", Expect::Refused, "sampler.solver", "is not one of euler, unipc",
         [](Json& d) { d["sampler"]["solver"] = "heun"; });
  edited("id_300_characters", Expect::Refused, "shots[0].id", "at most 128",
         [](Json& d) { d["shots"][0]["id"] = std::string(300, 'x'); });
  edited("id_128_characters", Expect::Renders, "", "", [](Json& d) { d["shots"][0]["id"] = std::string(128, 'x'); });
  edited("id_with_space", Expect::Refused, "shots[0].id", "may contain only letters",
         [](Json& d) { d["shots"][0]["id"] = "shot one"; });
  edited("id_duplicate", Expect::Refused, "shots[1].id", "is used by an earlier shot",
         [](Json& d) { d["shots"][1]["id"] = "a"; });
  edited("prompt_missing", Expect::Refused, "shots[0].prompt", "missing (required)",
         [](Json& d) { d["shots"][0].erase("prompt"); });
  edited("seed_negative", Expect::Refused, "shots[0].seed", "is negative", [](Json& d) { d["shots"][0]["seed"] = -1; });
  edited("seed_too_big", Expect::Refused, "shots[0].seed", "does not fit in 64 bits",
         [](Json& d) { d["shots"][0]["seed"] = 1e20; });
  edited("mode_unknown", Expect::Refused, "shots[1].continuity.mode", "is not one of",
         [](Json& d) { d["shots"][1]["continuity"]["mode"] = "teleport"; });
  edited("blend_ratio", Expect::Refused, "shots[1].continuity.blend_ratio", "outside [0, 1]",
         [](Json& d) { d["shots"][1]["continuity"]["blend_ratio"] = 2; });
  edited("overlap_too_many", Expect::Refused, "shots[1].continuity.overlap_latents", "must be less than the shot's",
         [](Json& d) {
           d["shots"][1]["continuity"]["mode"] = "latent_overlap";
           d["shots"][1]["continuity"]["overlap_latents"] = 5;
         });
  cases.back().modelRule = true;
  edited("shots_not_array", Expect::Refused, "shots", "must be an array, not an object",
         [](Json& d) { d["shots"] = Json::object(); });
  edited("model_unknown", Expect::Refused, "model", "is not a built-in model",
         [](Json& d) { d["model"] = "builtin:huge"; });
  edited("budget_not_a_size", Expect::Refused, "memory.budget", "is not a size",
         [](Json& d) { d["memory"]["budget"] = "lots"; });
  edited("budget_too_small", Expect::Refused, "memory.budget", "below the smallest",
         [](Json& d) { d["memory"]["budget"] = "1MiB"; });
  edited("budget_16GB", Expect::Renders, "", "", [](Json& d) { d["memory"]["budget"] = "16GB"; });

  // Fallback images: what the renderer would read must be a regular, bounded, readable image.
  fallback("fallback_dev_zero", Expect::Refused, "is a device, not a file",
           [](const fs::path&) { return "/dev/zero"; });
  fallback("fallback_directory", Expect::Refused, "is a directory, not a file", [](const fs::path& dir) {
    fs::create_directories(dir / "images");
    return "images";
  });
  fallback("fallback_fifo", Expect::Refused, "is a FIFO", [](const fs::path& dir) {
    ::mkfifo((dir / "pipe.png").c_str(), 0600);
    return "pipe.png";
  });
  fallback("fallback_not_an_image", Expect::Refused, "is not a PNG, JPEG, WebP or BMP image",
           [writeBytes](const fs::path& dir) {
             writeBytes(dir / "notes.png", "png");
             return "notes.png";
           });
  fallback("fallback_empty", Expect::Refused, "is empty", [writeBytes](const fs::path& dir) {
    writeBytes(dir / "empty.png", "");
    return "empty.png";
  });
  fallback("fallback_huge_png", Expect::Refused, "each side may be at most 8192", [writeBytes](const fs::path& dir) {
    std::string png = kTinyPng;
    png[16] = '\x7f';  // width 0x7f000002 in the header: far beyond any sane image
    writeBytes(dir / "huge.png", png);
    return "huge.png";
  });
  // A PNG cut short: once passed by validate, then libpng's own "Read Error" on stderr and a failure mid-render.
  fallback("fallback_truncated_png", Expect::Refused, "is a truncated PNG image", [writeBytes](const fs::path& dir) {
    writeBytes(dir / "cut.png", kTinyPng.substr(0, kTinyPng.size() - 12));  // without its IEND chunk
    return "cut.png";
  });
  fallback("fallback_missing", Expect::Warned, "does not exist", [](const fs::path&) { return "refs/missing.png"; });
  fallback("fallback_dangling_link", Expect::Refused, "is a symbolic link to \"gone/red.png\", which does not exist",
           [](const fs::path& dir) {
             std::error_code ignored;
             fs::create_symlink("gone/red.png", dir / "link.png", ignored);
             return "link.png";
           });
  fallback("fallback_png", Expect::Renders, "", [writeBytes](const fs::path& dir) {
    writeBytes(dir / "red.png", kTinyPng);
    return "red.png";
  });
  return cases;
}

// Writes case `c` into its own folder under `root`; returns the document's path.
inline std::filesystem::path writeBadDocument(const BadDocument& c, const std::filesystem::path& root) {
  const std::filesystem::path dir = root / c.name;
  std::filesystem::create_directories(dir);
  const std::filesystem::path file = dir / (c.name + ".json");
  const std::string bytes = c.write(dir);
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
  return file;
}

}  // namespace shotchain::testing
