#pragma once

#include <vector>

namespace shotchain::demo {

struct DemoModels;

// How much the DiT reads each attribute from the prompt: its velocity loss on latents of held-out
// clips with the right prompt, and how much that loss grows when one word is changed to another
// value (colour, shape or direction). A gap near 0 means the DiT ignores that word.
struct PromptReliance {
  double sigma = 0;
  double loss = 0;  // mean squared velocity error, right prompt
  double colourGap = 0, shapeGap = 0, directionGap = 0;
};

std::vector<PromptReliance> measurePromptReliance(const DemoModels& models, int clips,
                                                  const std::vector<double>& sigmas);

}  // namespace shotchain::demo
