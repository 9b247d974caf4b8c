#include "cli/command_specs.h"

#include "cli/shared_options.h"

namespace shotchain::cli {

const CommandSpec kValidateCommand{
    "validate",
    "FILE...",
    1,
    -1,
    "check sequence documents; prints FILE: ok or every problem (file, JSON path, rule); exit 1 on any error",
    {},
    ""};

const CommandSpec kInfoCommand{
    "info", "FILE", 1, 1, "summarise a sequence: settings, shots with start frames, seeds, continuity", {}, ""};

const CommandSpec kInspectCommand{
    "inspect",
    "WEIGHTS",
    1,
    1,
    "describe a weights file (.safetensors, .safetensors.index.json, a .pt/.pth checkpoint or a .gguf) from its header "
    "alone: family, variant, config, parameters, dtypes (GGUF types), problems; a checkpoint's state dicts",
    {kStateDictKey, {"--tensors", K::Flag, "", "also list every tensor: name, stored type, shape, bytes"}},
    ""};

const CommandSpec kConvertCommand{
    "convert",
    "IN OUT",
    2,
    2,
    "IN.pt/.pth → OUT.safetensors: a safetensors copy of a PyTorch zip checkpoint's state dict (read without running "
    "it), wrapper prefixes such as model. stripped; IN.gguf → OUT.safetensors: every tensor dequantised to float32; "
    "weights → OUT.gguf --type T: quantised as llama.cpp's quantiser does for the family (embeddings, modulations, "
    "the head and small tensors stay F32). Written atomically",
    {kStateDictKey,
     {"--chunk", K::Int64, "N", "latent frames per chunk of a causal DiT, stored as num_frame_per_block metadata"},
     {"--type", K::Text, "T",
      "with OUT.gguf: Q8_0, Q6_K, Q5_K, Q5_1, Q5_0, Q4_K, Q4_1, Q4_0, Q3_K, Q2_K, BF16, F16 or F32"},
     {"--force", K::Flag, "", "replace OUT when it exists"}},
    ""};

const CommandSpec kModelsCommand{
    "models",
    "[FOLDER...]",
    0,
    64,
    "list every weights file under the folders (a ComfyUI models folder or a flat one; default: the built-in demo "
    "model) from its header alone: role, family and variant, size, dtype, and why a file cannot be used",
    {{"--json", K::Flag, "", "one JSON array instead of the table"}},
    ""};

const CommandSpec kRenderCommand{
    "render",
    "SEQUENCE",
    1,
    1,
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
     {"--serial-decode", K::Flag, "", "decode each shot before sampling the next (default: beside it, when pinned)"},
     {"--decode-threads", K::Int, "N", "intra-op threads of a decode beside the sampling (default 1)"},
     kRanks,
     kTimeout,
     kGuidanceParallel},
    ""};

const CommandSpec kPlanCommand{
    "plan",
    "SEQUENCE",
    1,
    1,
    "the memory plan: bytes per component, peak per policy, the chosen policy and why; exit 1 when it does not fit",
    {kBudget,
     kPolicy,
     {"--device", K::Text, "cpu|cuda[:N]", "device to plan for (default: cuda:0 when present, else cpu)"},
     {"--device-memory", K::ByteSize, "SIZE",
      "plan for a device of this much memory, present or not (e.g. 24GiB for a card you do not have here)"},
     kJson,
     {"--ranks", K::Int64, "N", "also the figures per rank of a render spread over N processes"},
     kGuidanceParallel},
    ""};

const CommandSpec kCalibrateCacheCommand{
    "calibrate-cache",
    "SEQUENCE",
    1,
    1,
    "sample the sequence's shots computing every step and write what each step changed (MagCache's magnitude ratios, "
    "a TeaCache polynomial) to a calibration file that sampler.cache.calibration names",
    {{"--out", K::Path, "FILE", "the calibration file (default: <SEQUENCE without .json>.cache.json beside it)"},
     {"--device", K::Text, "cpu|cuda[:N]", "compute device (default cpu)"},
     {"--shots", K::Range, "A-B", "calibrate on shots A to B (1-based; default: all)"},
     {"--force", K::Flag, "", "replace the calibration file when it exists"}},
    ""};

const CommandSpec kImportComfyCommand{
    "import-comfy",
    "WORKFLOW",
    1,
    1,
    "read a ComfyUI workflow (UI or API format) into a sequence document: every KSampler a shot; prints the shots, "
    "the nodes it did not map and why, and what changed meaning; exit 1 when the workflow cannot be read",
    {{"-o", K::Path, "SEQUENCE", "where the document goes (default: WORKFLOW's name with .sequence.json, beside it)"},
     {"--models", K::Path, "DIR", "a ComfyUI models folder where the loaders' file names are looked up"},
     {"--force", K::Flag, "", "replace SEQUENCE when it exists"},
     kJson},
    ""};

const CommandSpec kExportComfyCommand{
    "export-comfy",
    "SEQUENCE",
    1,
    1,
    "write every enabled shot as a ComfyUI API-format workflow of stock nodes of its model family (continuity has no "
    "stock node: "
    "each shot starts from noise there)",
    {{"-o", K::Path, "DIR", "the folder for NN-<shot id>.json (default: SEQUENCE's name with .comfy, beside it)"}},
    ""};

const CommandSpec kVersionCommand{"version", "", 0, 0, "print the version, libtorch and the compute device", {}, ""};

}  // namespace shotchain::cli
