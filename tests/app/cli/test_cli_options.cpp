// The CLI's option tables (app/cli/command_specs.cpp): every value parsed whole, usage errors that
// name the option and the text, and usage text written from the tables, by the parser and by the
// real `shotchain` binary.
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>

#include <cctype>
#include <set>

#include "cli/command_specs.h"
#include "cli/commands.h"
#include "cli/option_values.h"
#include "cli_run.h"
#include "test_registry.h"
#include "test_support.h"

using namespace shotchain;
using namespace shotchain::cli;
using namespace shotchain::testing;

namespace {

// The message of the UsageError `parse` throws; empty when it throws none.
QString usageError(const CommandSpec& spec, const Args& args, std::size_t first = 0) {
  try {
    (void)spec.parse(args, first);
  } catch (const UsageError& error) {
    if (error.command() != spec.name) return q("wrong command: " + error.command());
    return QString::fromUtf8(error.what());
  }
  return {};
}

QStringList commandLine(const CommandSpec& spec) { return q(spec.name).split(' '); }

// Every run of white space as one space: the help wraps long lines.
std::string squeezed(const std::string& text) {
  std::string out;
  for (const char c : text)
    if (!std::isspace(static_cast<unsigned char>(c)))
      out += c;
    else if (!out.empty() && out.back() != ' ')
      out += ' ';
  return out;
}

std::string optionUsage(const OptionSpec& option) {
  return option.kind == OptionKind::Flag ? option.name : option.name + " " + option.value;
}

}  // namespace

class CliOptions : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void valuesAreParsedWholeAndTyped() {
    const ParsedOptions render = kRenderCommand.parse(
        {"a.json", "--shots", "2-4", "--budget", "16GiB", "--policy", "offload", "--device", "cuda:1", "--resume"});
    QVERIFY(render.operands() == Args{"a.json"});
    QCOMPARE(render.range("--shots")->first, 2);
    QCOMPARE(render.range("--shots")->last, 4);
    QCOMPARE(*render.byteSize("--budget"), std::uint64_t{16} << 30);
    QCOMPARE(q(*render.text("--policy")), QString("offload"));
    QCOMPARE(q(*render.text("--device")), QString("cuda:1"));
    QVERIFY(render.flag("--resume"));
    QVERIFY(!render.flag("--json"));
    QVERIFY(!render.text("--out"));
    QCOMPARE(kRenderCommand.parse({"a.json", "--shots", "3"}).range("--shots")->last, 3);

    const ParsedOptions vae =
        kBenchVaeCommand.parse({"vae", "--size", "832x480", "--frames", "9", "--repeats", "2"}, 1);
    QCOMPARE(vae.dimensions("--size")->width, std::int64_t{832});
    QCOMPARE(vae.dimensions("--size")->height, std::int64_t{480});
    QCOMPARE(*vae.int64("--frames"), std::int64_t{9});
    QCOMPARE(*vae.integer("--repeats"), 2);
    QCOMPARE(*kEvalDemoCommand.parse({"--shift", "2.5e0"}).number("--shift"), 2.5);
    // A default of the table's own is parsed like a given value and stated in the help.
    const ParsedOptions defaults = kBenchVaeCommand.parse({"vae"}, 1);
    QCOMPARE(defaults.dimensions("--size")->width, std::int64_t{64});
    QCOMPARE(*defaults.int64("--frames"), std::int64_t{5});
    QVERIFY(!defaults.int64("--tile"));
    QVERIFY(kBenchVaeCommand.help().find("(default 64x64)") != std::string::npos);
    // "--" ends the options: what follows is an operand even when it looks like one.
    QVERIFY(kValidateCommand.parse({"a.json", "--", "--b.json"}).operands() == (Args{"a.json", "--b.json"}));
  }

  void listsSplitOnTheirSeparator() {
    QCOMPARE(splitList("a,b,,c"), (std::vector<std::string>{"a", "b", "", "c"}));
    QCOMPARE(splitList(""), (std::vector<std::string>{""}));
    QCOMPARE(splitList("p=1,2;q=3", ';'), (std::vector<std::string>{"p=1,2", "q=3"}));
  }

  void badValuesNameTheOptionAndTheText() {
    const struct {
      const CommandSpec& spec;
      Args args;
      QString message;
    } cases[] = {
        {kRenderCommand, {"a.json", "--shots", "2x-4"}, "--shots: \"2x-4\" is not a range like 2-4"},
        {kRenderCommand, {"a.json", "--shots", "0-2"}, "--shots: \"0-2\" is not a range like 2-4"},
        {kRenderCommand, {"a.json", "--shots", "4-2"}, "--shots: \"4-2\" is not a range like 2-4"},
        {kRenderCommand, {"a.json", "--budget", "lots"}, "--budget: \"lots\" is not a size (e.g. 16GiB)"},
        {kRenderCommand, {"a.json", "--out", ""}, "--out: the path is empty"},
        {kPlanCommand,
         {"a.json", "--policy", "sometimes"},
         "--policy: \"sometimes\" is not one of pinned, offload, reload, auto"},
        {kEvalDemoCommand, {"--samples", "12k"}, "--samples: \"12k\" is not a whole number"},
        {kEvalDemoCommand, {"--chains", "99999999999"}, "--chains: \"99999999999\" is out of range"},
        {kTrainDemoCommand, {"--minutes", "inf"}, "--minutes: \"inf\" is not a finite number"},
        {kVerifyCommand, {"--max-abs", "1e-4x", "io.safetensors"}, "--max-abs: \"1e-4x\" is not a number"},
        {kBenchVaeCommand, {"--size", "64x6a"}, "--size: \"64x6a\" is not a size like 832x480"},
        {kBenchDitCommand, {"--dtype", "fp16"}, "--dtype: \"fp16\" is not one of float32, bfloat16"},
    };
    for (const auto& c : cases) QCOMPARE(usageError(c.spec, c.args), c.message);
  }

  void unknownOptionsMissingValuesAndOperandsAreNamed() {
    QCOMPARE(usageError(kPlanCommand, {"a.json", "--frob"}),
             QString("unknown option \"--frob\" (shotchain plan --help lists them)"));
    QCOMPARE(usageError(kVersionCommand, {"--json"}),
             QString("unknown option \"--json\" (shotchain version --help lists them)"));
    QCOMPARE(usageError(kRenderCommand, {"a.json", "--out"}), QString("--out needs a value (DIR)"));
    QCOMPARE(usageError(kRenderCommand, {}), QString("missing SEQUENCE"));
    QCOMPARE(usageError(kRenderCommand, {"a.json", "b.json"}), QString("unexpected \"b.json\" (it takes SEQUENCE)"));
    QCOMPARE(usageError(kBenchDitCommand, {"dit", "extra"}, 1), QString("unexpected \"extra\" (it takes no operands)"));
    QVERIFY_THROWS_EXCEPTION(HelpRequested, (void)kRenderCommand.parse({"a.json", "--help"}));
  }

  // A getter for a name the table lacks, or of another kind, is a programming error, never a silent nothing.
  void askingForAnOptionTheTableLacksThrows() {
    const ParsedOptions parsed = kRenderCommand.parse({"a.json"});
    QVERIFY_THROWS_EXCEPTION(std::logic_error, (void)parsed.flag("--frob"));
    QVERIFY_THROWS_EXCEPTION(std::logic_error, (void)parsed.integer("--shots"));
  }

  void everyUsageListsEveryOptionOfItsTable() {
    const std::string all = overview();
    for (const Command& command : commands()) {
      const CommandSpec* spec = command.spec;
      const std::string help = squeezed(spec->help());
      // Its defaults parse (they are parsed like given values whenever the option is absent).
      (void)spec->parse(Args(static_cast<std::size_t>(spec->minOperands), "x.json"));
      QVERIFY2(all.find(spec->synopsis(100, "  ")) != std::string::npos, spec->name.c_str());
      for (const OptionSpec& option : spec->options) {
        const std::string label = spec->name + " " + option.name;
        QVERIFY2(spec->synopsis().find("[" + optionUsage(option) + "]") != std::string::npos, label.c_str());
        QVERIFY2(help.find(" " + optionUsage(option) + " " + option.help) != std::string::npos, label.c_str());
      }
    }
    QVERIFY(all.find("[--device cpu|cuda[:N]]") != std::string::npos);
  }

  // One row per command: a name once, something that runs it, and a verb's sub-commands found by their word.
  void theTableFindsEveryCommandByItsWords() {
    std::set<std::string> names;
    for (const Command& command : commands()) {
      QVERIFY2(names.insert(command.spec->name).second, command.spec->name.c_str());
      QVERIFY(command.run != nullptr);
      const std::string sub = command.spec->name.find(' ') == std::string::npos
                                  ? std::string()
                                  : command.spec->name.substr(command.spec->verb().size() + 1);
      const Command* found = findCommand(command.spec->verb(), sub.empty() ? Args{} : Args{sub});
      QVERIFY2(found == &command, command.spec->name.c_str());
    }
    QVERIFY(findCommand("frobnicate", {}) == nullptr);
    QVERIFY_THROWS_EXCEPTION(UsageError, (void)findCommand("bench", {}));
    QVERIFY_THROWS_EXCEPTION(UsageError, (void)findCommand("bench", {"frob"}));
    QVERIFY_THROWS_EXCEPTION(HelpRequested, (void)findCommand("bench", {"--help"}));
  }

  // The binary prints the tables' text: `help`, `VERB --help`, and usage errors with exit 2.
  void theBinaryPrintsTheTables() {
    const CliRun help = runCli({"help"}, 60000);
    QCOMPARE(help.exitCode, 0);
    QVERIFY2(help.out.contains(q(overview())), qPrintable(help.out));
    const QString plan = help.out.mid(help.out.indexOf("  plan "));
    QVERIFY2(plan.left(plan.indexOf("\n      ")).contains("[--device cpu|cuda[:N]]"), qPrintable(plan));

    for (const Command& command : commands()) {
      const CommandSpec* spec = command.spec;
      const CliRun run = runCli(commandLine(*spec) << "--help", 60000);
      QVERIFY2(run.exitCode == 0, qPrintable(q(spec->name) + ": " + run.out));
      QVERIFY2(run.out.contains(q(spec->help())), qPrintable(run.out));
    }
    const CliRun bench = runCli({"bench", "--help"}, 60000);
    QCOMPARE(bench.exitCode, 0);
    for (const CommandSpec* spec : commandsOf("bench")) QVERIFY(bench.out.contains(q(spec->help())));
  }

  void theBinaryRefusesBadOptionsWithExitTwo() {
    QTemporaryDir dir;
    const QString sequence = q(workflow("demo.json").string()), out = dir.filePath("never");
    const struct {
      QStringList args;
      QString message;
    } cases[] = {
        {{"render", sequence, "--out", out, "--shots", "2x-4"},
         "shotchain render: --shots: \"2x-4\" is not a range like 2-4"},
        {{"plan", sequence, "--frob"}, "shotchain plan: unknown option \"--frob\""},
        {{"bench", "vae", "--size", "64", "--json"}, "shotchain bench vae: --size: \"64\" is not a size like 832x480"},
        {{"bench", "frob"}, "shotchain bench: \"frob\" is not a bench command (dit, vae,"},
        {{"info"}, "shotchain info: missing FILE"},
        // Sizes a forward cannot run with: once a floating-point trap, an endless loop, unbounded memory.
        {{"bench", "dit", "--tokens", "0"}, "shotchain bench dit: --tokens: 0 must be from 1 to 1000000"},
        {{"bench", "dit", "--tokens", "-5"}, "shotchain bench dit: --tokens: -5 must be from 1 to 1000000"},
        {{"bench", "dit", "--layers", "2147483648"},
         "shotchain bench dit: --layers: 2147483648 must be from 1 to 1000"},
        {{"bench", "dit", "--dim", "1536", "--ffn", "262144", "--tokens", "1000000"},
         "shotchain bench dit: the model's weights and one forward need"},
        {{"train-demo", "--out", out, "--seed", "-3"}, "shotchain train-demo: --seed: \"-3\" is negative"},
    };
    for (const auto& c : cases) {
      const CliRun run = runCli(c.args, 60000);
      QVERIFY2(run.exitCode == 2, qPrintable(c.args.join(' ') + ": " + run.out));
      QVERIFY2(run.err.contains(c.message), qPrintable(run.err));
      QVERIFY2(run.err.contains("usage: shotchain " + c.args.front()), qPrintable(run.err));
    }
    QVERIFY(!QFileInfo::exists(out));
  }
};

SHOTCHAIN_TEST(CliOptions, Core)
#include "test_cli_options.moc"
