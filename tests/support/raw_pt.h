#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace shotchain::testing {

// PyTorch checkpoints written byte by byte: the opcodes torch.save emits, and a stored zip around
// them, so hostile variants need no Python.
namespace pickle {

inline std::string le(std::uint64_t value, int bytes) {
  std::string out;
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
  return out;
}
// Opcode byte then operand (appended, not "X" + …: GCC 12 misreads that as an overflow).
inline std::string op(char opcode, const std::string& operand) {
  std::string out(1, opcode);
  out += operand;
  return out;
}
inline std::string str(const std::string& text) { return op('X', le(text.size(), 4)) + text; }
inline std::string integer(std::uint32_t value) { return op('J', le(value, 4)); }
inline std::string global(const std::string& module, const std::string& name) {
  return op('c', module) + "\n" + name + "\n";
}
inline std::string tuple(const std::vector<std::string>& items) {
  std::string out = "(";
  for (const std::string& item : items) out += item;
  return out + "t";
}
inline std::string orderedDict() { return global("collections", "OrderedDict") + ")R"; }
// torch._utils._rebuild_tensor_v2(('storage', torch.<type>, key, 'cpu', numel), offset, sizes, strides, False, {})
inline std::string tensor(const std::string& storageType, const std::string& key, std::uint32_t numel,
                          std::uint32_t offset, const std::vector<std::uint32_t>& sizes,
                          const std::vector<std::uint32_t>& strides) {
  std::vector<std::string> sizeItems, strideItems;
  for (const std::uint32_t s : sizes) sizeItems.push_back(integer(s));
  for (const std::uint32_t s : strides) strideItems.push_back(integer(s));
  const std::string pid =
      tuple({str("storage"), global("torch", storageType), str(key), str("cpu"), integer(numel)}) + "Q";
  return global("torch._utils", "_rebuild_tensor_v2") +
         tuple({pid, integer(offset), tuple(sizeItems), tuple(strideItems), "\x89", orderedDict()}) + "R";
}
// {key: value, …} as an OrderedDict, a whole protocol-2 pickle.
inline std::string dictPickle(const std::vector<std::pair<std::string, std::string>>& items) {
  std::string out = std::string("\x80\x02") + orderedDict() + "(";
  for (const auto& [key, value] : items) out += str(key) + value;
  return out + "u.";
}

}  // namespace pickle

// A zip archive of the given entries, stored (method 0) unless `method` says otherwise; with `zip64`
// every size and offset is in ZIP64 extra fields and records, as for archives past 4 GiB.
inline std::string storedZip(const std::vector<std::pair<std::string, std::string>>& entries, std::uint16_t method = 0,
                             bool zip64 = false) {
  using pickle::le;
  const std::uint64_t all = 0xFFFFFFFF;
  std::string out, directory;
  for (const auto& [name, data] : entries) {
    const std::uint64_t offset = out.size();
    const std::string sizes = le(0, 4) + (zip64 ? le(all, 4) + le(all, 4) : le(data.size(), 4) + le(data.size(), 4));
    const std::string localExtra = zip64 ? le(1, 2) + le(16, 2) + le(data.size(), 8) + le(data.size(), 8) : "";
    const std::string centralExtra =
        zip64 ? localExtra.substr(0, 2) + le(24, 2) + localExtra.substr(4) + le(offset, 8) : "";
    out += le(0x04034b50, 4) + le(45, 2) + le(0, 2) + le(method, 2) + le(0, 4) + sizes + le(name.size(), 2) +
           le(localExtra.size(), 2) + name + localExtra + data;
    directory += le(0x02014b50, 4) + le(45, 2) + le(45, 2) + le(0, 2) + le(method, 2) + le(0, 4) + sizes +
                 le(name.size(), 2) + le(centralExtra.size(), 2) + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 4) +
                 le(zip64 ? all : offset, 4) + name + centralExtra;
  }
  const std::uint64_t directoryAt = out.size();
  out += directory;
  if (zip64) {
    const std::uint64_t recordAt = out.size();
    out += le(0x06064b50, 4) + le(44, 8) + le(45, 2) + le(45, 2) + le(0, 4) + le(0, 4) + le(entries.size(), 8) +
           le(entries.size(), 8) + le(directory.size(), 8) + le(directoryAt, 8);
    out += le(0x07064b50, 4) + le(0, 4) + le(recordAt, 8) + le(1, 4);
    return out + le(0x06054b50, 4) + le(0, 2) + le(0, 2) + le(0xFFFF, 2) + le(0xFFFF, 2) + le(all, 4) + le(all, 4) +
           le(0, 2);
  }
  out += le(0x06054b50, 4) + le(0, 2) + le(0, 2) + le(entries.size(), 2) + le(entries.size(), 2) +
         le(directory.size(), 4) + le(directoryAt, 4) + le(0, 2);
  return out;
}

// A checkpoint "<prefix>/data.pkl" + "<prefix>/data/<key>" storages + "<prefix>/version".
inline std::string ptArchive(const std::string& dataPkl,
                             const std::vector<std::pair<std::string, std::string>>& storages,
                             const std::string& prefix = "archive", bool zip64 = false) {
  std::vector<std::pair<std::string, std::string>> entries{{prefix + "/data.pkl", dataPkl}};
  for (const auto& [key, bytes] : storages) entries.emplace_back(prefix + "/data/" + key, bytes);
  entries.emplace_back(prefix + "/version", "3\n");
  return storedZip(entries, 0, zip64);
}

}  // namespace shotchain::testing
