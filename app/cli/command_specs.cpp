#include "cli/command_specs.h"

#include "sequence/validation.h"

namespace shotchain::cli {

using K = OptionKind;

namespace {

const OptionSpec kJson{"--json", K::Flag, "", "print the result as JSON on stdout"};
const OptionSpec kPolicy{"--policy", K::Choice, "pinned|offload|reload|auto",
                         "residency policy (default: the sequence's)"};
// The smallest budget a document may give (memory.budget), so the command line cannot go below it either.
const OptionSpec kBudget{"--budget", K::ByteSize, "SIZE", "memory budget, at least 64 MiB, e.g. 16GiB or 16GB (default: the sequence's)",
                         "", limits::kMinMemoryBudget};
const OptionSpec kDtype{"--dtype", K::Choice, "float32|bfloat16", "weights and activations", "float32"};
const OptionSpec kRepeats{"--repeats", K::Int, "N", "timed runs, the median is reported", "3"};
const OptionSpec kRanks{"--ranks", K::Int64, "N",
                        "spread over N processes (c10d): started here, or joined through RANK, WORLD_SIZE, MASTER_ADDR, "
                        "MASTER_PORT as torchrun sets them"};
const OptionSpec kTimeout{"--timeout", K::Int64, "S",
                          "seconds before a collective between ranks fails (default: SHOTCHAIN_COLLECTIVE_TIMEOUT, else 300)"};
const OptionSpec kStateDictKey{"--key", K::Text, "KEY",
                                "the state dict of a .pt/.pth checkpoint, e.g. generator_ema (default: docs/checkpoints.md)"};
const OptionSpec kGuidanceParallel{"--guidance-parallel", K::Flag, "",
                                   "with an even rank count: the conditional and unconditional passes of guidance on "
                                   "different halves of the ranks"};

}  // namespace

const CommandSpec kValidateCommand{
    "validate", "FILE...", 1, -1,
    "check sequence documents; prints FILE: ok or every problem (file, JSON path, rule); exit 1 on any error",
    {}, ""};

const CommandSpec kInfoCommand{
    "info", "FILE", 1, 1, "summarise a sequence: settings, shots with start frames, seeds, continuity", {}, ""};

const CommandSpec kInspectCommand{
    "inspect", "WEIGHTS", 1, 1,
    "describe a weights file (.safetensors, .safetensors.index.json, or a .pt/.pth checkpoint) from its header alone: "
    "family, variant, config, parameters, dtypes, problems; a checkpoint's state dicts",
    {kStateDictKey},
    ""};

const CommandSpec kConvertCommand{
    "convert", "IN.pt OUT.safetensors", 2, 2,
    "write a safetensors copy of a PyTorch zip checkpoint's state dict (.pt, .pth; read without running it), "
    "wrapper prefixes such as model. stripped; written atomically",
    {kStateDictKey,
     {"--chunk", K::Int64, "N", "latent frames per chunk of a causal DiT, stored as num_frame_per_block metadata"},
     {"--force", K::Flag, "", "replace OUT.safetensors when it exists"}},
    ""};

const CommandSpec kModelsCommand{
    "models", "[FOLDER...]", 0, 64,
    "list every weights file under the folders (a ComfyUI models folder or a flat one; default: the built-in demo "
    "model) from its header alone: role, family and variant, size, dtype, and why a file cannot be used",
    {{"--json", K::Flag, "", "one JSON array instead of the table"}},
    ""};

const CommandSpec kVerifyCommand{
    "verify", "[WEIGHTS] IO", 1, 2,
    "run the component an IO file names (Wan 2.1/2.2 or SkyReels-V2 DF DiT, Wan 2.1/2.2 VAE, UMT5, the Wan 2.2 TI2V loop, the A14B two-expert loops) on its inputs and compare with its "
    "outputs; an IO file alone (the diffusion-forcing timestep matrices) is checked exactly; exit 0 within tolerance",
    {{"--max-abs", K::Double, "X", "largest allowed absolute error (default: the component's)"},
     {"--rel-l2", K::Double, "Y", "largest allowed relative L2 error (default: the component's)"},
     {"--vae", K::Path, "FILE", "the VAE a sampling-loop IO file encodes its image and decodes its video with"},
     {"--high-noise", K::Path, "FILE", "a two-expert loop's high-noise expert (WEIGHTS is the low-noise one)"}},
    ""};

const CommandSpec kRenderCommand{
    "render", "SEQUENCE", 1, 1,
    "render every shot in order with the DiT kept loaded; frames, MP4, report and timeline in the output folder\n"
    "exit 0 done, 1 failed part-way, 2 usage, 3 invalid document, 4 refused before any work, 5 stopped (Ctrl+C), "
    "6 a rank died, hung or failed (--resume continues)",
    {{"--out", K::Path, "DIR", "output folder (default: <SEQUENCE without .json>.render beside it)"},
     kPolicy,
     kBudget,
     {"--device", K::Text, "cpu|cuda[:N]", "compute device (default cpu)"},
     {"--resume", K::Flag, "", "re-use every shot already on disk with its current settings"},
     {"--shots", K::Range, "A-B", "render shots A to B (1-based); the shots they hand off from must be on disk"},
     kJson,
     {"--no-preview", K::Flag, "", "no latent preview at each step"},
     kRanks,
     kTimeout,
     kGuidanceParallel},
    ""};

const CommandSpec kPlanCommand{
    "plan", "SEQUENCE", 1, 1,
    "the memory plan: bytes per component, peak per policy, the chosen policy and why; exit 1 when it does not fit",
    {kBudget, kPolicy, {"--device", K::Text, "cpu|cuda[:N]", "device to plan for (default: cuda:0 when present, else cpu)"},
     {"--device-memory", K::ByteSize, "SIZE", "plan for a device of this much memory, present or not (e.g. 24GiB for a card you do not have here)"},
     kJson,
     {"--ranks", K::Int64, "N", "also the figures per rank of a render spread over N processes"},
     kGuidanceParallel},
    ""};

const CommandSpec kBenchDitCommand{
    "bench dit", "", 0, 0,
    "DiT forward time, analytic FLOPs and achieved FLOP/s against the machine's GEMM rate measured in the same run",
    {{"--config", K::Text, "tiny|1.3b|14b", "DiT preset (default: 1.3b's sizes with 2 layers)"},
     {"--dim", K::Int64, "N", "model width"},
     {"--layers", K::Int64, "N", "transformer blocks"},
     {"--heads", K::Int64, "N", "attention heads"},
     {"--ffn", K::Int64, "N", "feed-forward width"},
     {"--tokens", K::Int64, "N", "tokens per forward", "1560"},
     kRepeats,
     kDtype,
     kJson,
     kRanks,
     kTimeout,
     kGuidanceParallel},
    "With --ranks N: compute time, time in collectives, bytes sent per layer and per forward, and the relative L2 "
    "error against one process."};

const CommandSpec kBenchVaeCommand{
    "bench vae", "", 0, 0, "Wan 2.1 / 2.2 VAE decode time and peak memory, full vs tiled, with the estimate beside the measured peak",
    {{"--config", K::Text, "tiny|wan21|tiny22|wan22|custom", "VAE preset", "wan21"},
     {"--dim", K::Int64, "N", "base width (makes the config custom)"},
     {"--frames", K::Int64, "N", "pixel frames, 4k+1", "5"},
     {"--size", K::Dimensions, "WxH", "pixels, multiples of 8 (16 for Wan 2.2)", "64x64"},
     {"--tiled", K::Flag, "", "also decode tiled"},
     {"--tile", K::Int64, "N", "tile size in latent pixels (implies --tiled)"},
     {"--overlap", K::Int64, "N", "tile overlap in latent pixels (default tile/4, at least 2)"},
     kRepeats,
     kDtype,
     kJson},
    "--tiled without --tile takes the tile from the memory estimate for half the full decode's estimate."};

const CommandSpec kBenchStreamingCommand{
    "bench streaming", "", 0, 0,
    "a block-causal DiT streaming with a KV cache: one shot against re-running the clip at every step, the time to a "
    "shot's first decoded frame, cache bytes, the cache over a long chain and, on the demo, the cut figures of keep vs "
    "recache vs the clean-prefix handoff",
    {{"--config", K::Text, "demo|tiny", "the built-in demo model, or a tiny random causal DiT and VAE", "demo"},
     {"--size", K::Dimensions, "WxH", "shot size in pixels", "64x64"},
     {"--latent-frames", K::Int64, "N", "latent frames per shot", "9"},
     {"--steps", K::Int, "N", "sampling steps per chunk (default: the demo's 20; tiny 8)"},
     {"--shots", K::Int, "N", "shots in the chain whose memory is followed", "20"},
     {"--chain-steps", K::Int, "N", "sampling steps per chunk in that chain", "2"},
     {"--window", K::Int64, "W", "latent frames of the attention window in the chain (default: demo 3, tiny 8)"},
     {"--chains", K::Int, "N", "two-shot chains per handoff for the cut figures (demo only; default 16, 0: none)"},
     kRepeats,
     kJson},
    ""};

const CommandSpec kBenchCacheCommand{
    "bench cache", "", 0, 0,
    "held-out demo shots rendered without a step cache and with each policy at three thresholds, side by side in one "
    "run: DiT passes, speed-up, PSNR/SSIM against the uncached frames, cut flash and colour drift (docs/step-cache.md)",
    {{"--shots", K::Int, "N", "shots in the chain (held-out prompts, latent handoff)", "8"},
     {"--steps", K::Int, "N", "sampling steps per shot", "40"},
     {"--policies", K::Text, "LIST", "policies to compare, comma-separated", "teacache,magcache,easycache,first_block"},
     {"--thresholds", K::Text, "P=A,B,C;…", "thresholds per policy (default: docs/step-cache.md)"},
     {"--device", K::Text, "cpu|cuda[:N]", "compute device", "cpu"},
     {"--sheet", K::Path, "FILE.ppm", "a contact sheet: a row per run, each shot's middle frame"},
     kJson},
    ""};

const CommandSpec kCalibrateCacheCommand{
    "calibrate-cache", "SEQUENCE", 1, 1,
    "sample the sequence's shots computing every step and write what each step changed (MagCache's magnitude ratios, "
    "a TeaCache polynomial) to a calibration file that sampler.cache.calibration names",
    {{"--out", K::Path, "FILE", "the calibration file (default: <SEQUENCE without .json>.cache.json beside it)"},
     {"--device", K::Text, "cpu|cuda[:N]", "compute device (default cpu)"},
     {"--shots", K::Range, "A-B", "calibrate on shots A to B (1-based; default: all)"}},
    ""};

const CommandSpec kBenchResidencyCommand{
    "bench residency", "[SEQUENCE]", 0, 1,
    "the same chain of shots under pinned, offload and reload side by side: inter-shot overhead, handoff MSE vs round "
    "trip, peak memory, fragmentation after the run, bytes moved; give SEQUENCE or --config",
    {{"--config", K::Text, "demo|tiny|1.3b|14b", "a built-in chain instead of SEQUENCE (random weights except demo)"},
     {"--shots", K::Int, "N", "shots in the chain (SEQUENCE's shots repeat)", "10"},
     {"--steps", K::Int, "N", "sampling steps per shot"},
     {"--policies", K::Text, "LIST", "the policies to compare, comma-separated", "pinned,offload,reload"},
     {"--width", K::Int, "W", "shot width"},
     {"--height", K::Int, "H", "shot height"},
     {"--frames", K::Int, "F", "frames per shot"},
     {"--device", K::Text, "cpu|cuda[:N]", "compute device", "cpu"},
     kBudget,
     {"--out", K::Path, "DIR", "keep the renders there (default: a temporary folder, removed)"},
     {"--lora-switch", K::Flag, "", "also: two LoRAs taking turns shot by shot on the pinned DiT, against reloading the base for every shot"},
     {"--experts", K::Flag, "", "also: the chain with two experts (the DiT and a copy as the high-noise one) both resident, swapped at the boundary through host memory, and read from disk"},
     kJson},
    ""};

const CommandSpec kTrainDemoCommand{
    "train-demo", "", 0, 0,
    "train the builtin:demo model (tokenizer, VAE, DiT) on procedural clips (resources/README.md)",
    {{"--out", K::Path, "DIR", "where the five demo files go", "resources/demo"},
     {"--minutes", K::Double, "N", "wall-clock cap over all phases (default: none)"},
     {"--seed", K::Int64, "S", "random seed, not negative (default 1)"},
     {"--vae-steps", K::Int64, "N", "VAE training steps (default 1200)"},
     {"--dit-steps", K::Int64, "N", "DiT training steps (default 4000)"},
     {"--latent-clips", K::Int, "N", "training clips encoded once for the DiT (default 2000)"},
     {"--shape-weight", K::Double, "W", "weight of the shape-disagreement loss (default 0)"},
     {"--resume-dit", K::Flag, "", "continue the DiT in DIR, keeping its other files"},
     {"--new-dit", K::Flag, "", "train a new DiT on DIR's tokenizer, text encoder and VAE"}},
    ""};

const CommandSpec kEvalDemoCommand{
    "eval-demo", "", 0, 0,
    "measure the builtin:demo model: prompt following, continuity, VAE PSNR, render time",
    {kJson,
     {"--dir", K::Path, "DIR", "the demo files", "resources/demo"},
     {"--samples", K::Int, "N", "held-out clips, one sample each (default 60)"},
     {"--chains", K::Int, "N", "two-shot chains per continuity mode (default 8)"},
     {"--steps", K::Int, "N", "sampling steps (default: the demo's)"},
     {"--shift", K::Double, "X", "schedule shift (default: the demo's)"},
     {"--guidance", K::Double, "X", "guidance scale (default: the demo's)"},
     {"--condition-noise", K::Int, "T", "timestep of the handed prefix on a diffusion-forcing model (default: the demo's)"}},
    ""};

const CommandSpec kImportComfyCommand{
    "import-comfy", "WORKFLOW", 1, 1,
    "read a ComfyUI workflow (UI or API format) into a sequence document: every KSampler a shot; prints the shots, "
    "the nodes it did not map and why, and what changed meaning; exit 1 when the workflow cannot be read",
    {{"-o", K::Path, "SEQUENCE", "where the document goes (default: WORKFLOW's name with .sequence.json, beside it)"},
     {"--models", K::Path, "DIR", "a ComfyUI models folder where the loaders' file names are looked up"},
     {"--force", K::Flag, "", "replace SEQUENCE when it exists"},
     kJson},
    ""};

const CommandSpec kExportComfyCommand{
    "export-comfy", "SEQUENCE", 1, 1,
    "write every enabled shot as a ComfyUI API-format workflow of stock nodes of its model family (continuity has no stock node: "
    "each shot starts from noise there)",
    {{"-o", K::Path, "DIR", "the folder for NN-<shot id>.json (default: SEQUENCE's name with .comfy, beside it)"}},
    ""};

const CommandSpec kVersionCommand{"version", "", 0, 0, "print the version, libtorch and the compute device", {}, ""};

}  // namespace shotchain::cli
