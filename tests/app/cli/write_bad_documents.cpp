// Writes the bad-document catalogue (builtin:demo model) as the fuzzer's corpus: CORPUS/seeds/ holds
// one file per case, CORPUS/new/ is left empty for what the fuzzer finds.
#include <cstdio>

#include "bad_documents.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_bad_documents CORPUS_DIR\n");
    return 2;
  }
  namespace fs = std::filesystem;
  const fs::path root = argv[1];
  fs::remove_all(root);
  fs::create_directories(root / "seeds");
  fs::create_directories(root / "new");
  const fs::path scratch = root / "cases";
  for (const auto& c : shotchain::testing::badDocumentCatalogue("builtin:demo")) {
    const fs::path file = shotchain::testing::writeBadDocument(c, scratch);
    fs::copy_file(file, root / "seeds" / file.filename());
  }
  fs::remove_all(scratch);
  return 0;
}
