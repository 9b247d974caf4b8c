#pragma once

#include <cstdint>
#include <string>

#include "demo/chain_cut_eval.h"
#include "demo/demo_generation.h"

namespace shotchain::continuity {
class KvStream;
}

namespace shotchain::demo {

// One shot streamed chunk by chunk over `stream` (continuity mode stream), the way the renderer's shot pass
// does it: continuing `previous` (then one latent fewer, decoded behind its last frame) or starting the stream.
// `recache`: a new prompt rebuilds the cache first.
DemoShot generateDemoStreamShot(const DemoModels& models, continuity::KvStream& stream, const std::string& prompt,
                                std::uint64_t seed, const DemoShotSettings& settings,
                                const DemoShot* previous = nullptr, const std::string& previousPrompt = {},
                                bool recache = true);

// Two-shot chains streamed over one cache with a new prompt at the cut, kept or recached.
ChainCutResult evaluateStreamChainCuts(const DemoModels& models, const DemoShotSettings& settings, int chains,
                                       int window, bool recache);

}  // namespace shotchain::demo
