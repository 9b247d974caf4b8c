// Precompiled for every translation unit of shotchain_core: torch/torch.h alone costs ~20 s.
#pragma once
#include <torch/torch.h>
