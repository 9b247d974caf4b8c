// The option tables of the benchmarks (`shotchain bench …`).
#include "cli/command_specs.h"
#include "cli/shared_options.h"

namespace shotchain::cli {

const CommandSpec kBenchDitCommand{
    "bench dit",
    "",
    0,
    0,
    "DiT forward time, analytic FLOPs and achieved FLOP/s against the machine's GEMM rate measured in the same run",
    {{"--config", K::Text, "tiny|1.3b|14b", "DiT preset (default: 1.3b's sizes with 2 layers)"},
     {"--dim", K::Int64, "N", "model width"},
     {"--layers", K::Int64, "N", "transformer blocks"},
     {"--heads", K::Int64, "N", "attention heads"},
     {"--ffn", K::Int64, "N", "feed-forward width"},
     {"--tokens", K::Int64, "N", "tokens per forward", "1560"},
     kRepeats,
     kDtype,
     {"--device", K::Text, "cpu|cuda[:N]", "compute device (default cpu)"},
     {"--quant", K::Text, "T",
      "the blocks' matmuls as GGUF T blocks (Q8_0, Q4_K, …) or as scaled fp8 (fp8: e4m3, a scale a tensor, as "
      "ComfyUI's *_fp8_scaled files), kept as stored and turned into --dtype at each call, as such a file loads"},
     {"--weights", K::Path, "FILE",
      "the DiT from a weights file (safetensors, .pt, .gguf; its config detected, quantised blocks kept as stored) "
      "instead of random weights"},
     {"--save-weights", K::Path, "FILE", "write the random DiT's float32 weights (official names) as safetensors"},
     {"--output", K::Path, "FILE", "write the forward's inputs (x, t, context) and output as float32 safetensors"},
     kJson,
     kRanks,
     kTimeout,
     kGuidanceParallel},
    "With --ranks N: compute time, time in collectives, bytes sent per layer and per forward, and the relative L2 "
    "error against one process."};

const CommandSpec kBenchVaeCommand{
    "bench vae",
    "",
    0,
    0,
    "Wan 2.1 / 2.2 VAE decode time and peak memory, full vs tiled, with the estimate beside the measured peak",
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
    "bench streaming",
    "",
    0,
    0,
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
    "bench cache",
    "",
    0,
    0,
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

const CommandSpec kBenchResidencyCommand{
    "bench residency",
    "[SEQUENCE]",
    0,
    1,
    "the same chain of shots under pinned, offload and reload side by side: inter-shot overhead, handoff MSE vs round "
    "trip, peak memory, fragmentation after the run, bytes moved; give SEQUENCE, --config or --size",
    {{"--config", K::Text, "demo|tiny|1.3b|14b",
      "a built-in chain instead of SEQUENCE (random weights except demo, written into the run's folder each time)"},
     {"--size", K::Text, "1.3b|14b|14b-layers:N",
      "a chain on a random DiT of that size (14b-layers:N: N blocks of the 14B's shapes) written once into the "
      "weights folder and read from there, with a random Wan 2.1 VAE and text encoder"},
     {"--weights-dir", K::Path, "DIR",
      "the weights folder of --size (default: bench-weights in the user cache folder)"},
     {"--dtype", K::Choice, "bfloat16|float32", "the matmul weights of --size (default: bfloat16)"},
     {"--shots", K::Int, "N", "shots in the chain (SEQUENCE's shots repeat)", "10"},
     {"--steps", K::Int, "N", "sampling steps per shot"},
     {"--policies", K::Text, "LIST", "the policies to compare, comma-separated", "pinned,offload,reload"},
     {"--width", K::Int, "W", "shot width"},
     {"--height", K::Int, "H", "shot height"},
     {"--frames", K::Int, "F", "frames per shot"},
     {"--device", K::Text, "cpu|cuda[:N]", "compute device", "cpu"},
     kBudget,
     {"--out", K::Path, "DIR", "keep the renders there (default: a temporary folder, removed)"},
     {"--lora-switch", K::Flag, "",
      "also: two LoRAs taking turns shot by shot on the pinned DiT, against reloading the base for every shot"},
     {"--preview-decoder", K::Path, "FILE",
      "a TAEHV file put in the chain's models folder (vae_approx/): every run decodes previews while it samples and "
      "says how many and what each cost"},
     {"--experts", K::Flag, "",
      "also: the chain with two experts (the DiT and a copy as the high-noise one) both resident, swapped at the "
      "boundary through host memory, and read from disk"},
     kJson},
    ""};

}  // namespace shotchain::cli
