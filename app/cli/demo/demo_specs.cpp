// The option tables of the demo model's training and evaluation.
#include "cli/command_specs.h"
#include "cli/shared_options.h"

namespace shotchain::cli {

const CommandSpec kTrainDemoCommand{
    "train-demo",
    "",
    0,
    0,
    "train the builtin:demo model (tokenizer, VAE, DiT) on procedural clips (resources/README.md)",
    {{"--out", K::Path, "DIR", "where the five demo files go", "resources/demo"},
     {"--minutes", K::Double, "N", "wall-clock cap over all phases (default: none)"},
     {"--seed", K::Int64, "S", "random seed, not negative (default 1)"},
     {"--vae-steps", K::Int64, "N", "VAE training steps (default 1200)"},
     {"--dit-steps", K::Int64, "N", "DiT training steps (default 4000)"},
     {"--latent-clips", K::Int, "N", "training clips encoded once for the DiT (default 2000)"},
     {"--shape-weight", K::Double, "W", "weight of the shape-disagreement loss (default 0)"},
     {"--resume-dit", K::Flag, "", "continue the DiT in DIR, keeping its other files"},
     {"--new-dit", K::Flag, "", "train a new DiT on DIR's tokenizer, text encoder and VAE"},
     {"--keyframes", K::Flag, "",
      "train a new first-last-frame image-to-video DiT on DIR's tokenizer, text encoder and VAE"}},
    ""};

const CommandSpec kEvalDemoCommand{
    "eval-demo",
    "",
    0,
    0,
    "measure the builtin:demo model: prompt following, continuity, VAE PSNR, render time",
    {kJson,
     {"--dir", K::Path, "DIR", "the demo files", "resources/demo"},
     {"--samples", K::Int, "N", "held-out clips, one sample each (default 60)"},
     {"--chains", K::Int, "N", "two-shot chains per continuity mode (default 8)"},
     {"--steps", K::Int, "N", "sampling steps (default: the demo's)"},
     {"--shift", K::Double, "X", "schedule shift (default: the demo's)"},
     {"--guidance", K::Double, "X", "guidance scale (default: the demo's)"},
     {"--condition-noise", K::Int, "T",
      "timestep of the handed prefix on a diffusion-forcing model (default: the demo's)"}},
    ""};

}  // namespace shotchain::cli
