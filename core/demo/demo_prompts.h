#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace shotchain::demo {

// Every prompt of the demo language (colour × shape × direction × background), in a fixed order.
std::vector<std::string> allDemoPrompts();

// Trains the demo tokenizer with Debian's `spm_train` (word model, T5 ids: pad 0, eos 1, unk 2,
// no bos) on allDemoPrompts(), writing `output` (a sentencepiece model). The corpus is written
// beside it and removed afterwards. Throws std::runtime_error when spm_train is missing or fails.
void trainDemoTokenizer(const std::filesystem::path& output);

}  // namespace shotchain::demo
