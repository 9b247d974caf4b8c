#include "demo/demo_prompts.h"

#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "demo/procedural_clip.h"

namespace shotchain::demo {

std::vector<std::string> allDemoPrompts() {
  std::vector<std::string> prompts;
  for (int c = 0; c < static_cast<int>(demoColours().size()); ++c)
    for (int s = 0; s < kShapeCount; ++s)
      for (int d = 0; d < kDirectionCount; ++d)
        for (int b = 0; b < static_cast<int>(demoBackgrounds().size()); ++b)
          prompts.push_back(clipPrompt(c, static_cast<Shape>(s), static_cast<Direction>(d), b));
  return prompts;
}

void trainDemoTokenizer(const std::filesystem::path& output) {
  const std::filesystem::path corpus = output.parent_path() / "tokenizer_corpus.txt";
  {
    std::ofstream out(corpus);
    for (const std::string& prompt : allDemoPrompts()) out << prompt << '\n';
    if (!out) throw std::runtime_error(corpus.string() + ": cannot write the tokenizer corpus");
  }
  std::filesystem::path prefix = output;
  prefix.replace_extension();
  const std::string command = "spm_train --input='" + corpus.string() + "' --model_prefix='" + prefix.string() +
                              "' --model_type=word --vocab_size=32 --hard_vocab_limit=false --character_coverage=1.0"
                              " --pad_id=0 --eos_id=1 --unk_id=2 --bos_id=-1 --minloglevel=2 > /dev/null 2>&1";
  if (std::system(command.c_str()) != 0)
    throw std::runtime_error("spm_train failed (is Debian's sentencepiece installed?): " + command);
  std::filesystem::path model = prefix;
  model += ".model";
  if (model != output) std::filesystem::rename(model, output);
  std::filesystem::path vocab = prefix;
  vocab += ".vocab";
  std::filesystem::remove(vocab);
  std::filesystem::remove(corpus);
}

}  // namespace shotchain::demo
