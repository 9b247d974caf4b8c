#pragma once

// What the product knows of a model family beyond its classes: the values and words every other part
// reads from the family's registry row (model_registry.h) instead of writing them again. Plain data,
// no torch: the resolver, the importer and the studio read it.
#include <array>
#include <span>
#include <string>

namespace shotchain::models {

// A picture size the inspector offers for a family's DiT.
struct SizePreset {
  const char* label;
  int width;
  int height;
};

// A DiT variant's published step-cache numbers (docs/step-cache.md), keyed by the variant id the DiT's
// header gives (DitFacts::variant), never by a display string.
struct PublishedCacheTable {
  const char* variant;
  std::span<const double> teaCacheCoefficients;  // TeaCache's polynomial, highest power first
  std::span<const double> magCacheRatios;        // MagCache's interleaved (conditional, unconditional) ratios, 50 steps
};

// A layer name the family's own LoRAs may use for one of its layers ("blocks.0.self_attn.q" is also
// "blocks.0.attn1.to_q" in diffusers' spelling): the suffix as the family names it and the other spelling.
struct LoraLayerAlias {
  const char* own;
  const char* alias;
};

// A cheap latent → RGB projection for live previews: one row of RGB weights per latent channel and a bias.
struct LatentRgbTable {
  std::span<const std::array<float, 3>> weights;
  std::array<float, 3> bias{};
  const char* source = "";
};

// ComfyUI's vocabulary for a family: what export-comfy writes and import-comfy reads.
struct ComfyWords {
  const char* file = "";                // the stock template's file name for this component
  const char* clipType = "";            // text encoders: CLIPLoader's type
  const char* latentNode = "";          // DiTs: the node its template samples from
  bool latentTakesStartImage = false;   // … with vae and start_image inputs (an image latent)
  const char* imageToVideoNode = "";    // two experts of an image-to-video pair: the node that conditions on the image
  const char* firstLastFrameNode = "";  // … and the one that conditions on a start and an end image
  // … and a custom node of continuity svi: an anchor latent and the previous clip's last latents (its inputs
  // anchor_samples, prev_samples, length, motion_latent_count)
  const char* motionNode = "";
  bool videoOutput = false;  // CreateVideo + SaveVideo (else SaveAnimatedWEBP)
};

// The reference's sampler settings for a family, where they differ from the sequence's own defaults (0: none).
struct ReferenceSampling {
  double shift = 0;
  int steps = 0;
  double guidance = 0;
};

// A LoRA the family's community publishes, told by its file name: every word of `words` (up to the first "") is a
// word of the name (case-insensitive, between non-letters). The first entry that fits is what is said of the file.
struct NamedLora {
  std::array<const char*, 3> words;
  const char* says;
};

struct FamilyKnowledge {
  const char* name = "";  // what the studio calls the family ("Wan 2.2 TI2V-5B")
  // DiTs.
  const char* defaultNegativePrompt = "";  // the reference's, when a shot gives none ("": an empty one)
  double expertBoundary = 0;               // a pair of experts: the switch as a fraction of 1000 timesteps (0: none)
  std::span<const SizePreset> sizes = {};
  std::span<const LoraLayerAlias> loraLayerAliases = {};
  const char* loraTarget = "";  // what a LoRA for it is called in the Models panel ("Wan DiT")
  std::span<const NamedLora> namedLoras = {};
  std::span<const PublishedCacheTable> cacheTables = {};
  ReferenceSampling sampling = {};
  // VAEs.
  const LatentRgbTable* preview = nullptr;
  ComfyWords comfy;
};

// The published step-cache table of `variant` among `knowledge`'s, or null.
const PublishedCacheTable* publishedCacheTable(const FamilyKnowledge& knowledge, const std::string& variant);

}  // namespace shotchain::models
