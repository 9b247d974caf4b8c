#pragma once

#include <string>
#include <string_view>

namespace shotchain::models {

// Wan's prompt cleaning before UMT5 tokenisation (HuggingfaceTokenizer with clean='whitespace',
// wan/modules/tokenizers.py):
//   whitespace_clean(basic_clean(text)), basic_clean = ftfy.fix_text → html.unescape twice → strip,
//   whitespace_clean = re.sub(r'\s+', ' ') → strip.
// Input and output are UTF-8; invalid bytes become U+FFFD (Python would have refused them).
//
// ftfy.fix_text is approximated by ftfyApproximation(); what it cannot reproduce:
//  - mojibake repair (fix_encoding: text decoded with the wrong codec, e.g. "cafÃ©" → "café",
//    with its C1-control and lossy-sequence fixes): left as is;
//  - the final NFC normalisation: left to SentencePiece, whose UMT5 model normalises with NFKC
//    (which includes NFC composition);
//  - half-width katakana → full-width (left to NFKC as well).
// For ordinary prompts these never fire, so the result equals the reference.
std::string wanCleanPrompt(std::string_view text);

// The reproducible steps of ftfy.fix_text (ftfy 6 defaults), in ftfy's order:
//  1. HTML entities with a ';' (ftfy's unescape_html), only when the text contains no '<';
//  2. ANSI terminal escapes removed (ESC [ digits/; letter);
//  3. Latin ligatures split (ﬁ → fi, Ĳ → IJ, …);
//  4. full-width ASCII → ASCII, ideographic space → space;
//  5. curly quotes straightened (U+02BC, U+2018–U+201B → ', U+201C–U+201F → ");
//  6. line breaks (\r\n, \r, U+2028, U+2029, U+0085) → \n;
//  7. control characters removed (U+0000–U+0008, U+000B, U+000E–U+001F, U+007F, U+206A–U+206F,
//     U+FEFF, U+FFF9–U+FFFC).
std::string ftfyApproximation(std::string_view text);

// Python's html.unescape: numeric references with its replacement rules (cp1252 for 0x80–0x9F,
// U+FFFD for 0, surrogates and > U+10FFFF, nothing for other invalid code points), and named
// references with or without ';' and the longest-prefix rule for the legacy names. Named
// references known: all of HTML 4 (Latin-1, symbols, Greek) plus apos and the HTML5 legacy
// (no-';') names. The ~2000 other HTML5 names (rare in prompts) are not known: they stay as
// written, or, when they begin with a legacy name ("&copysr;"), get the legacy-prefix rule.
std::string htmlUnescape(std::string_view text);

// re.sub(r'\s+', ' ', text).strip() with Python's Unicode whitespace (str.isspace).
std::string collapseWhitespace(std::string_view text);

}  // namespace shotchain::models
