#pragma once

// What a model set's files say of themselves, from their headers alone (no weights read), with the
// knowledge of the family each file belongs to: everything the resolver needs to decide a shot's
// settings before anything loads. Plain data, no torch.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "models/family_knowledge.h"
#include "models/model_files.h"

namespace shotchain::models {

struct DitFacts {
  std::filesystem::path file;
  std::string family;       // the registry row ("wan_dit", "wan22_ti2v")
  std::string familyName;   // in words, without the size ("Wan 2.2 TI2V", "SkyReels-V2 DF")
  std::string description;  // with the size ("Wan 2.2 TI2V, 5B")
  std::string variant;      // the id published tables are keyed by ("wan2.1-t2v-1.3b"); "" for none
  std::int64_t latentChannels = 16;
  std::int64_t patchFrames = 1;  // latent frames per token
  std::int64_t patchSide = 2;    // latent pixels per token side
  bool perFrameTimesteps = false;
  bool cleanFirstFrames = false;
  std::int64_t causalBlockSize = 0;         // > 0: streams over a KV cache, chunks of this many latent frames
  std::int64_t imageConditionChannels = 0;  // > 0: image-to-video (a start image is required)
  std::int64_t imageEmbeddingTokens = 0;    // > 0: attends to CLIP features of its pictures (257 a picture)
  int imagePictures = 0;                    // … of this many: 1 the start, 2 the start and the end
  bool firstLastFrame = false;              // its image condition can hold a last frame too (an end keyframe)
  std::int64_t contextLength = 512;
  std::uint64_t parameters = 0;
  const FamilyKnowledge* knowledge = nullptr;
};

struct VaeFacts {
  std::filesystem::path file;
  std::string family;
  std::string description;
  std::int64_t latentChannels = 16;
  std::int64_t temporalFactor = 4;  // pixel frames per latent frame (after the first)
  std::int64_t spatialFactor = 8;   // pixels per latent pixel
  const FamilyKnowledge* knowledge = nullptr;
};

struct TextEncoderFacts {
  std::filesystem::path file;
  std::string family;
  std::string description;
  bool embeddedTokenizer = false;   // the file carries its tokenizer
  std::filesystem::path tokenizer;  // a tokenizer file the set names (empty: the embedded one)
  const FamilyKnowledge* knowledge = nullptr;
};

struct ModelSetFacts {
  // Not read from files: the registry's default family, assumed while the set's files cannot be read so that
  // frame counts and sizes are still checked against a real geometry.
  bool assumed = false;
  ModelFiles files;
  DitFacts dit;
  std::optional<DitFacts> ditHighNoise;  // two experts: the high-noise one
  VaeFacts vae;
  TextEncoderFacts textEncoder;
  std::string imageEncoder;  // the CLIP vision file's description; empty: none
};

// Reads the headers of every file of `files`. Throws std::runtime_error naming the document field
// ("model.dit") and the file when a file is not a usable model of a family ShotChain knows in its role.
ModelSetFacts readModelSetFacts(const ModelFiles& files);

// The family a weights file's name suggests ("wan2.2_ti2v_5B_fp16.safetensors" → "Wan 2.2 TI2V-5B"), in
// words, or "" when the name says nothing: for a workflow whose model files are not on this machine.
std::string familyFromFileName(const std::string& fileName);

// The knowledge of every DiT family of the registry.
std::vector<const FamilyKnowledge*> ditFamilyKnowledge();

// The knowledge of the registry row `family` (IdentifiedModel::family, "wan_dit"); null for none.
const FamilyKnowledge* familyKnowledge(const std::string& family);

// The ComfyUI words of every family of the registry (what import-comfy recognises).
std::vector<ComfyWords> comfyWordsOfFamilies();

// The registry's default family (ModelSetFacts::assumed), for a sequence whose model files cannot be read.
ModelSetFacts assumedModelSetFacts();

}  // namespace shotchain::models
