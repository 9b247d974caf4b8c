// The option table of `shotchain verify`.
#include "cli/command_specs.h"
#include "cli/shared_options.h"

namespace shotchain::cli {

const CommandSpec kVerifyCommand{
    "verify",
    "[WEIGHTS] IO",
    1,
    2,
    "run the component an IO file names (Wan 2.1/2.2 or SkyReels-V2 DF DiT, Wan 2.1 I2V/FLF2V DiT, Wan 2.1/2.2 VAE, "
    "UMT5, the CLIP vision encoder, the Wan 2.2 TI2V loop, the A14B two-expert loops) on its inputs and compare with "
    "its "
    "outputs; an IO file alone (the diffusion-forcing timestep matrices) is checked exactly; exit 0 within tolerance",
    {{"--max-abs", K::Double, "X", "largest allowed absolute error (default: the component's)"},
     {"--rel-l2", K::Double, "Y", "largest allowed relative L2 error (default: the component's)"},
     {"--vae", K::Path, "FILE", "the VAE a sampling-loop IO file encodes its image and decodes its video with"},
     {"--high-noise", K::Path, "FILE", "a two-expert loop's high-noise expert (WEIGHTS is the low-noise one)"}},
    ""};

}  // namespace shotchain::cli
