#include "io/file_fingerprint.h"

#include <array>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "io/mapped_file.h"
#include "io/pt_checkpoint.h"
#include "io/pt_zip.h"
#include "util/bounded_file.h"
#include "util/digest.h"

namespace shotchain::io {
namespace {

std::string readAll(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path.string() + ": cannot be read");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A checkpoint's pickle names every tensor, its storage, shape and stride, as a safetensors header does.
std::string checkpointFingerprint(const std::filesystem::path& path) {
  const auto mapping = MappedFile::map(path);
  const auto bytes = mapping->bytes();
  for (const auto& [name, entry] : readZipDirectory(path.filename().string(), bytes))
    if (name.ends_with("/data.pkl") && name.find('/') == name.size() - 9) {
      const std::string_view pickle(reinterpret_cast<const char*>(bytes.data() + entry.offset), entry.size);
      return util::digestHex(std::string(pickle) + ":" + std::to_string(bytes.size()));
    }
  return util::digestHex(readAll(path));
}

}  // namespace

std::string fileFingerprint(const std::filesystem::path& path) {
  if (std::string problem = util::regularFileProblem(path, UINT64_MAX); !problem.empty())
    throw std::runtime_error(path.string() + ": " + problem);
  if (isPtCheckpointPath(path)) return checkpointFingerprint(path);
  if (path.extension() != ".safetensors") return util::digestHex(readAll(path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path.string() + ": cannot be read");
  std::array<unsigned char, 8> lengthBytes{};
  in.read(reinterpret_cast<char*>(lengthBytes.data()), lengthBytes.size());
  std::uint64_t headerLength = 0;
  for (int i = 7; i >= 0; --i) headerLength = (headerLength << 8) | lengthBytes[static_cast<std::size_t>(i)];
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (!in || error || headerLength > size) throw std::runtime_error(path.string() + ": not a safetensors file");
  std::string header(static_cast<std::size_t>(headerLength), '\0');
  in.read(header.data(), static_cast<std::streamsize>(header.size()));
  if (!in) throw std::runtime_error(path.string() + ": the header is truncated");
  return util::digestHex(header + ":" + std::to_string(size));
}

}  // namespace shotchain::io
