#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include <c10/core/ScalarType.h>

#include "models/vae_geometry.h"

namespace shotchain::models {

// One shot's latent as the DiT samples it.
struct LatentShape {
  std::int64_t channels = 16;
  std::int64_t frames = 1;
  std::int64_t height = 0;
  std::int64_t width = 0;
};

// What the memory planner needs to know of a DiT before loading it, whatever its family: read from
// the file's header alone.
class DitMemoryModel {
 public:
  virtual ~DitMemoryModel() = default;
  virtual std::string family() const = 0;   // "Wan 2.1 T2V", "SkyReels-V2 DF"
  virtual std::string variant() const = 0;  // "1.3B", "14B", "tiny", "custom"
  virtual std::uint64_t parameterCount() const = 0;
  virtual std::int64_t latentChannels() const = 0;
  virtual bool perFrameTimesteps() const = 0;
  // Holds handed or start-image latents clean at timestep 0 (DitCapabilities::cleanFirstFrames).
  virtual bool cleanFirstFrames() const { return false; }
  // Image-to-video (Wan 2.2 I2V): input channels of conditioning beside the latent (0: none).
  virtual std::int64_t imageConditionChannels() const { return 0; }
  // The dtype the loader gives the matmul weights, from their stored dtype.
  virtual c10::ScalarType loadDtype() const = 0;
  virtual std::uint64_t weightBytes(c10::ScalarType dtype) const = 0;
  // What keeping the file's quantised matmul weights as stored saves against weightBytes(dtype): fp8 codes take one
  // byte where `dtype` takes more (less their float32 scales), GGUF blocks what their type takes; 0 when it has none.
  virtual std::uint64_t keptAsStoredSaving(c10::ScalarType /*dtype*/) const { return 0; }
  // Latent frames per causal block (0: full attention, no streaming).
  virtual std::int64_t causalBlockSize() const = 0;
  // KV-cache bytes per latent frame of h × w latents for `branches` guidance branches (streaming).
  virtual std::uint64_t kvCacheBytesPerFrame(c10::ScalarType dtype, std::int64_t branches, std::int64_t height,
                                             std::int64_t width) const = 0;
  // Peak bytes of live tensors beyond the weights during one forward of `batch` samples.
  virtual std::uint64_t activationBytes(c10::ScalarType dtype, std::int64_t batch, const LatentShape& latent) const = 0;
  // On the host, beside those: oneDNN packs a matmul's weight into a copy of its own for the call (the largest
  // weight sets it; cuBLAS needs no such copy).
  virtual std::uint64_t hostMatmulWorkspace(c10::ScalarType /*dtype*/) const { return 0; }
  // The transformer's shape, for the figures of a render spread over ranks (memory/rank_plan.h).
  virtual std::int64_t tokens(const LatentShape& latent) const = 0;
  virtual std::int64_t hiddenSize() const = 0;
  virtual std::int64_t heads() const = 0;
  virtual std::int64_t layers() const = 0;
  // Rows of text context the DiT takes (tokens per prompt, EOS included; the text encoder pads to it).
  virtual std::int64_t contextLength() const = 0;
};

class VaeMemoryModel {
 public:
  virtual ~VaeMemoryModel() = default;
  virtual VaeGeometry geometry() const = 0;
  virtual std::string variant() const = 0;  // "wan2.1", "tiny", "custom"
  virtual std::uint64_t parameterCount() const = 0;
  virtual std::uint64_t weightBytes(c10::ScalarType dtype) const = 0;
  // What keeping the file's quantised matmul weights as stored saves against weightBytes(dtype): fp8 codes take one
  // byte where `dtype` takes more (less their float32 scales), GGUF blocks what their type takes; 0 when it has none.
  virtual std::uint64_t keptAsStoredSaving(c10::ScalarType /*dtype*/) const { return 0; }
  // Bytes beyond the weights to decode a latent of `latentFrames` × h × w (latent pixels);
  // `wholeClip`: the frames are kept as one tensor rather than streamed.
  virtual std::uint64_t decodeBytes(std::int64_t latentFrames, std::int64_t height, std::int64_t width,
                                    c10::ScalarType dtype, const VaeTiling& tiling, bool wholeClip) const = 0;
  // No tiling when the full decode fits `budgetBytes`, else the largest tile that does.
  virtual VaeTiling chooseTiling(std::int64_t latentFrames, std::int64_t height, std::int64_t width,
                                 c10::ScalarType dtype, std::uint64_t budgetBytes, bool wholeClip) const = 0;
};

// A text or image encoder, loaded for its inputs alone.
struct EncoderMemory {
  std::uint64_t weightBytes = 0;
  std::uint64_t activationBytes = 0;  // one prompt at the full text length; a shot's pictures (two at most)
};

// From the files' headers (nothing else is read), for the family each file is detected as.
// Throw std::runtime_error naming the file when it is not a usable model of a known family.
std::shared_ptr<const DitMemoryModel> ditMemoryModel(const std::filesystem::path& file);
std::shared_ptr<const VaeMemoryModel> vaeMemoryModel(const std::filesystem::path& file);
EncoderMemory textEncoderMemory(const std::filesystem::path& file);
EncoderMemory imageEncoderMemory(const std::filesystem::path& file);

}  // namespace shotchain::models
