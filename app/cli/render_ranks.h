#pragma once

#include "cli/distributed_session.h"
#include "render/renderer.h"
#include "sequence/sequence.h"

namespace shotchain::cli {

// A rank other than 0 of `shotchain render`: the same render (the same shots, re-used where rank
// 0's folder holds them), its DiT forwards shared with the other ranks, no file written.
int renderOnFollowerRank(const Sequence& sequence, render::RenderOptions options, DistributedSession& session);

}  // namespace shotchain::cli
