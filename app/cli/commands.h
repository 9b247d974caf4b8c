#pragma once

#include <span>
#include <string>
#include <vector>

#include "cli/cli_options.h"

namespace shotchain::cli {

// A command of `shotchain`: its option table (what it takes, its usage and help) and what runs it.
struct Command {
  const CommandSpec* spec;
  int (*run)(const Args& args);
};

// Every command, in the order `shotchain help` lists them: the one table of the verbs.
std::span<const Command> commands();

// The command `verb` names, its sub-command taken from `args` when the verb has several ("bench vae"). Null for
// an unknown verb; throws UsageError for a verb with several commands and no known sub-command, HelpRequested
// for `VERB --help`.
const Command* findCommand(const std::string& verb, const Args& args);

// The commands of one verb ("bench": dit, vae, residency, …), or the one named ("bench vae").
std::vector<const CommandSpec*> commandsOf(const std::string& verbOrCommand);

// `shotchain help`: every command's synopsis and summary.
std::string overview();

}  // namespace shotchain::cli
