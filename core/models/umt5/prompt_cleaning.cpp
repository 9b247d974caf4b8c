#include "models/umt5/prompt_cleaning.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace shotchain::models {
namespace {

using Text = std::u32string;

constexpr char32_t kReplacement = 0xFFFD;

Text decodeUtf8(std::string_view in) {
  Text out;
  out.reserve(in.size());
  std::size_t i = 0;
  while (i < in.size()) {
    const auto b0 = static_cast<unsigned char>(in[i]);
    int length = 0;
    char32_t cp = 0;
    char32_t minimum = 0;
    if (b0 < 0x80) {
      out.push_back(b0);
      ++i;
      continue;
    } else if ((b0 & 0xE0) == 0xC0) {
      length = 2, cp = b0 & 0x1F, minimum = 0x80;
    } else if ((b0 & 0xF0) == 0xE0) {
      length = 3, cp = b0 & 0x0F, minimum = 0x800;
    } else if ((b0 & 0xF8) == 0xF0) {
      length = 4, cp = b0 & 0x07, minimum = 0x10000;
    } else {
      out.push_back(kReplacement);
      ++i;
      continue;
    }
    bool valid = i + static_cast<std::size_t>(length) <= in.size();
    for (int k = 1; valid && k < length; ++k) {
      const auto b = static_cast<unsigned char>(in[i + static_cast<std::size_t>(k)]);
      if ((b & 0xC0) != 0x80)
        valid = false;
      else
        cp = (cp << 6) | (b & 0x3F);
    }
    if (!valid || cp < minimum || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      out.push_back(kReplacement);
      ++i;
      continue;
    }
    out.push_back(cp);
    i += static_cast<std::size_t>(length);
  }
  return out;
}

void appendUtf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string encodeUtf8(const Text& text) {
  std::string out;
  out.reserve(text.size());
  for (const char32_t cp : text) appendUtf8(out, cp);
  return out;
}

// Python's str.isspace().
bool isPythonSpace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

bool isAsciiAlnum(char32_t c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// ---- named character references -------------------------------------------------------------

struct Entity {
  char32_t cp;
  bool legacy;  // also recognised without ';' (HTML5 legacy names)
};

const std::map<std::string, Entity, std::less<>>& entities() {
  static const std::map<std::string, Entity, std::less<>> table = [] {
    std::map<std::string, Entity, std::less<>> t;
    // HTML 4 Latin-1 names, U+00A0 … U+00FF in order; all of them are HTML5 legacy names.
    static const std::array<const char*, 96> latin1 = {
        "nbsp",   "iexcl",  "cent",   "pound",  "curren", "yen",    "brvbar", "sect",   "uml",    "copy",   "ordf",
        "laquo",  "not",    "shy",    "reg",    "macr",   "deg",    "plusmn", "sup2",   "sup3",   "acute",  "micro",
        "para",   "middot", "cedil",  "sup1",   "ordm",   "raquo",  "frac14", "frac12", "frac34", "iquest", "Agrave",
        "Aacute", "Acirc",  "Atilde", "Auml",   "Aring",  "AElig",  "Ccedil", "Egrave", "Eacute", "Ecirc",  "Euml",
        "Igrave", "Iacute", "Icirc",  "Iuml",   "ETH",    "Ntilde", "Ograve", "Oacute", "Ocirc",  "Otilde", "Ouml",
        "times",  "Oslash", "Ugrave", "Uacute", "Ucirc",  "Uuml",   "Yacute", "THORN",  "szlig",  "agrave", "aacute",
        "acirc",  "atilde", "auml",   "aring",  "aelig",  "ccedil", "egrave", "eacute", "ecirc",  "euml",   "igrave",
        "iacute", "icirc",  "iuml",   "eth",    "ntilde", "ograve", "oacute", "ocirc",  "otilde", "ouml",   "divide",
        "oslash", "ugrave", "uacute", "ucirc",  "uuml",   "yacute", "thorn",  "yuml"};
    for (std::size_t i = 0; i < latin1.size(); ++i) t[latin1[i]] = {static_cast<char32_t>(0xA0 + i), true};
    for (const auto& [name, cp] :
         std::initializer_list<std::pair<const char*, char32_t>>{{"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}})
      t[name] = {cp, true};
    for (const auto& [name, cp] : std::initializer_list<std::pair<const char*, char32_t>>{
             {"AMP", '&'}, {"LT", '<'}, {"GT", '>'}, {"QUOT", '"'}, {"COPY", 0xA9}, {"REG", 0xAE}})
      t[name] = {cp, true};
    // HTML 4 special characters and symbols (need ';'), plus apos.
    for (const auto& [name, cp] : std::initializer_list<std::pair<const char*, char32_t>>{
             {"apos", '\''},      {"OElig", 0x152},    {"oelig", 0x153},   {"Scaron", 0x160},  {"scaron", 0x161},
             {"Yuml", 0x178},     {"fnof", 0x192},     {"circ", 0x2C6},    {"tilde", 0x2DC},   {"ensp", 0x2002},
             {"emsp", 0x2003},    {"thinsp", 0x2009},  {"zwnj", 0x200C},   {"zwj", 0x200D},    {"lrm", 0x200E},
             {"rlm", 0x200F},     {"ndash", 0x2013},   {"mdash", 0x2014},  {"lsquo", 0x2018},  {"rsquo", 0x2019},
             {"sbquo", 0x201A},   {"ldquo", 0x201C},   {"rdquo", 0x201D},  {"bdquo", 0x201E},  {"dagger", 0x2020},
             {"Dagger", 0x2021},  {"bull", 0x2022},    {"hellip", 0x2026}, {"permil", 0x2030}, {"prime", 0x2032},
             {"Prime", 0x2033},   {"lsaquo", 0x2039},  {"rsaquo", 0x203A}, {"oline", 0x203E},  {"frasl", 0x2044},
             {"euro", 0x20AC},    {"image", 0x2111},   {"weierp", 0x2118}, {"real", 0x211C},   {"trade", 0x2122},
             {"alefsym", 0x2135}, {"larr", 0x2190},    {"uarr", 0x2191},   {"rarr", 0x2192},   {"darr", 0x2193},
             {"harr", 0x2194},    {"crarr", 0x21B5},   {"lArr", 0x21D0},   {"uArr", 0x21D1},   {"rArr", 0x21D2},
             {"dArr", 0x21D3},    {"hArr", 0x21D4},    {"forall", 0x2200}, {"part", 0x2202},   {"exist", 0x2203},
             {"empty", 0x2205},   {"nabla", 0x2207},   {"isin", 0x2208},   {"notin", 0x2209},  {"ni", 0x220B},
             {"prod", 0x220F},    {"sum", 0x2211},     {"minus", 0x2212},  {"lowast", 0x2217}, {"radic", 0x221A},
             {"prop", 0x221D},    {"infin", 0x221E},   {"ang", 0x2220},    {"and", 0x2227},    {"or", 0x2228},
             {"cap", 0x2229},     {"cup", 0x222A},     {"int", 0x222B},    {"there4", 0x2234}, {"sim", 0x223C},
             {"cong", 0x2245},    {"asymp", 0x2248},   {"ne", 0x2260},     {"equiv", 0x2261},  {"le", 0x2264},
             {"ge", 0x2265},      {"sub", 0x2282},     {"sup", 0x2283},    {"nsub", 0x2284},   {"sube", 0x2286},
             {"supe", 0x2287},    {"oplus", 0x2295},   {"otimes", 0x2297}, {"perp", 0x22A5},   {"sdot", 0x22C5},
             {"lceil", 0x2308},   {"rceil", 0x2309},   {"lfloor", 0x230A}, {"rfloor", 0x230B}, {"lang", 0x27E8},
             {"rang", 0x27E9},    {"loz", 0x25CA},     {"spades", 0x2660}, {"clubs", 0x2663},  {"hearts", 0x2665},
             {"diams", 0x2666},   {"thetasym", 0x3D1}, {"upsih", 0x3D2},   {"piv", 0x3D6},     {"sigmaf", 0x3C2}})
      t[name] = {cp, false};
    // Greek letters: capitals U+0391…U+03A9 (no U+03A2), small U+03B1…U+03C9 (sigmaf above).
    static const std::array<const char*, 24> greek = {
        "Alpha", "Beta", "Gamma",   "Delta", "Epsilon", "Zeta",  "Eta", "Theta",   "Iota", "Kappa", "Lambda", "Mu",
        "Nu",    "Xi",   "Omicron", "Pi",    "Rho",     "Sigma", "Tau", "Upsilon", "Phi",  "Chi",   "Psi",    "Omega"};
    for (std::size_t i = 0; i < greek.size(); ++i) {
      const auto offset = static_cast<char32_t>(i < 17 ? i : i + 1);  // skip the final-sigma slot
      t[greek[i]] = {0x391 + offset, false};
      std::string small = greek[i];
      small[0] = static_cast<char>(small[0] - 'A' + 'a');
      t[small] = {0x3B1 + offset, false};
    }
    return t;
  }();
  return table;
}

// Python's html._invalid_charrefs for 0x80–0x9F (the cp1252 reading), plus 0x00 and 0x0D.
std::optional<char32_t> invalidCharref(std::uint64_t n) {
  static const std::array<char32_t, 32> cp1252 = {0x20AC, 0x81,   0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
                                                  0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D,   0x017D, 0x8F,
                                                  0x90,   0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
                                                  0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D,   0x017E, 0x0178};
  if (n == 0x00) return kReplacement;
  if (n == 0x0D) return U'\r';
  if (n >= 0x80 && n <= 0x9F) return cp1252[n - 0x80];
  return std::nullopt;
}

// Python's html._invalid_codepoints (replaced by nothing).
bool invalidCodepoint(std::uint64_t n) {
  return (n >= 0x1 && n <= 0x8) || n == 0xB || (n >= 0xE && n <= 0x1F) || (n >= 0x7F && n <= 0x9F) ||
         (n >= 0xFDD0 && n <= 0xFDEF) || ((n & 0xFFFE) == 0xFFFE && n <= 0x10FFFF);
}

void appendNumeric(Text& out, std::uint64_t n, bool overflow) {
  if (!overflow) {
    if (const auto special = invalidCharref(n)) {
      out.push_back(*special);
      return;
    }
  }
  if (overflow || (n >= 0xD800 && n <= 0xDFFF) || n > 0x10FFFF) {
    out.push_back(kReplacement);
    return;
  }
  if (invalidCodepoint(n)) return;
  out.push_back(static_cast<char32_t>(n));
}

// Tries a character reference at text[i] == '&'. Returns the index after it, or nullopt.
// `semicolonOnly` restricts to ftfy's pattern &#?[0-9A-Za-z]{1,24}; .
std::optional<std::size_t> reference(const Text& text, std::size_t i, Text& out, bool semicolonOnly) {
  const std::size_t n = text.size();
  std::size_t j = i + 1;
  if (j < n && text[j] == '#') {
    ++j;
    const bool hex = j < n && (text[j] == 'x' || text[j] == 'X');
    if (hex) ++j;
    const std::size_t start = j;
    std::uint64_t value = 0;
    bool overflow = false;
    while (j < n) {
      const char32_t c = text[j];
      int digit = -1;
      if (c >= '0' && c <= '9')
        digit = static_cast<int>(c - '0');
      else if (hex && c >= 'a' && c <= 'f')
        digit = static_cast<int>(c - 'a' + 10);
      else if (hex && c >= 'A' && c <= 'F')
        digit = static_cast<int>(c - 'A' + 10);
      if (digit < 0) break;
      value = value * (hex ? 16 : 10) + static_cast<std::uint64_t>(digit);
      if (value > 0x10FFFFFFull) overflow = true, value = 0x10FFFFFFull;
      ++j;
    }
    if (j == start) return std::nullopt;
    const bool semicolon = j < n && text[j] == ';';
    if (semicolonOnly && (!semicolon || j - (i + 1) > 25)) return std::nullopt;
    appendNumeric(out, value, overflow);
    return semicolon ? j + 1 : j;
  }
  // Named: [^\t\n\f <&#;]{1,32};?
  std::string name;
  while (j < n && name.size() < 32) {
    const char32_t c = text[j];
    if (c == '\t' || c == '\n' || c == '\f' || c == ' ' || c == '<' || c == '&' || c == '#' || c == ';') break;
    if (c >= 0x80) break;  // every known name is ASCII; Python would keep such a match untouched
    name.push_back(static_cast<char>(c));
    ++j;
  }
  if (name.empty()) return std::nullopt;
  const bool semicolon = j < n && text[j] == ';';
  if (semicolonOnly) {
    if (!semicolon ||
        !std::all_of(name.begin(), name.end(), [](char c) { return isAsciiAlnum(static_cast<unsigned char>(c)); }))
      return std::nullopt;
    const auto it = entities().find(name);
    if (it == entities().end()) return std::nullopt;
    out.push_back(it->second.cp);
    return j + 1;
  }
  const auto& table = entities();
  if (const auto it = table.find(name); it != table.end() && (semicolon || it->second.legacy)) {
    out.push_back(it->second.cp);
    return semicolon ? j + 1 : j;
  }
  // Longest legacy prefix (Python: for x in range(len(s)-1, 1, -1), s including the ';').
  const std::size_t matchLength = name.size() + (semicolon ? 1 : 0);
  for (std::size_t x = std::min(matchLength - 1, name.size()); x > 1; --x) {
    const auto it = table.find(std::string_view(name).substr(0, x));
    if (it != table.end() && it->second.legacy) {
      out.push_back(it->second.cp);
      return i + 1 + x;
    }
  }
  return std::nullopt;
}

Text unescape(const Text& text, bool semicolonOnly) {
  Text out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '&') {
      if (const auto next = reference(text, i, out, semicolonOnly)) {
        i = *next;
        continue;
      }
    }
    out.push_back(text[i++]);
  }
  return out;
}

Text ftfy(const Text& in) {
  Text text = in;
  // 1. ftfy's own HTML unescape, unless the text looks like HTML.
  if (text.find(U'<') == Text::npos) text = unescape(text, true);
  Text out;
  // 2. ANSI terminal escapes: ESC '[' [0-9;]* [A-Za-z].
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == 0x1B && i + 1 < text.size() && text[i + 1] == '[') {
      std::size_t j = i + 2;
      while (j < text.size() && ((text[j] >= '0' && text[j] <= '9') || text[j] == ';')) ++j;
      if (j < text.size() && ((text[j] >= 'a' && text[j] <= 'z') || (text[j] >= 'A' && text[j] <= 'Z'))) {
        i = j;
        continue;
      }
    }
    out.push_back(text[i]);
  }
  text.swap(out);
  out.clear();
  static const std::map<char32_t, std::u32string> ligatures = {
      {0x132, U"IJ"},      {0x133, U"ij"},      {0x149, U"\u02BCn"},  {0x1F1, U"DZ"},  {0x1F2, U"Dz"},  {0x1F3, U"dz"},
      {0x1C4, U"D\u017D"}, {0x1C5, U"D\u017E"}, {0x1C6, U"d\u017E"},  {0x1C7, U"LJ"},  {0x1C8, U"Lj"},  {0x1C9, U"lj"},
      {0x1CA, U"NJ"},      {0x1CB, U"Nj"},      {0x1CC, U"nj"},       {0xFB00, U"ff"}, {0xFB01, U"fi"}, {0xFB02, U"fl"},
      {0xFB03, U"ffi"},    {0xFB04, U"ffl"},    {0xFB05, U"\u017Ft"}, {0xFB06, U"st"}};
  for (std::size_t i = 0; i < text.size(); ++i) {
    char32_t c = text[i];
    // 3. ligatures.
    if (const auto it = ligatures.find(c); it != ligatures.end()) {
      out += it->second;
      continue;
    }
    // 4. character width.
    if (c >= 0xFF01 && c <= 0xFF5E)
      c -= 0xFEE0;
    else if (c == 0x3000)
      c = ' ';
    // 5. quotes.
    if (c == 0x2BC || (c >= 0x2018 && c <= 0x201B))
      c = '\'';
    else if (c >= 0x201C && c <= 0x201F)
      c = '"';
    // 6. line breaks.
    if (c == '\r') {
      if (i + 1 < text.size() && text[i + 1] == '\n') ++i;
      c = '\n';
    } else if (c == 0x2028 || c == 0x2029 || c == 0x85) {
      c = '\n';
    }
    // 7. control characters.
    if (c <= 0x08 || c == 0x0B || (c >= 0x0E && c <= 0x1F) || c == 0x7F || (c >= 0x206A && c <= 0x206F) ||
        c == 0xFEFF || (c >= 0xFFF9 && c <= 0xFFFC))
      continue;
    out.push_back(c);
  }
  return out;
}

Text collapse(const Text& text) {
  Text out;
  out.reserve(text.size());
  bool pendingSpace = false;
  for (const char32_t c : text) {
    if (isPythonSpace(c)) {
      pendingSpace = !out.empty();
      continue;
    }
    if (pendingSpace) out.push_back(' ');
    pendingSpace = false;
    out.push_back(c);
  }
  return out;
}

}  // namespace

std::string ftfyApproximation(std::string_view text) { return encodeUtf8(ftfy(decodeUtf8(text))); }

std::string htmlUnescape(std::string_view text) { return encodeUtf8(unescape(decodeUtf8(text), false)); }

std::string collapseWhitespace(std::string_view text) { return encodeUtf8(collapse(decodeUtf8(text))); }

std::string wanCleanPrompt(std::string_view text) {
  Text t = ftfy(decodeUtf8(text));
  t = unescape(unescape(t, false), false);
  return encodeUtf8(collapse(t));  // collapse also strips, so basic_clean's strip() is included
}

}  // namespace shotchain::models
