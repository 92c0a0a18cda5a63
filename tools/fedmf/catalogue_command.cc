#include "tools/fedmf/catalogue_command.h"

#include <iostream>
#include <memory>
#include <string>

#include "common/cli/command_line.h"
#include "common/data/catalogue.h"
#include "nlohmann/json.hpp"

namespace fedmf::cli {

void RegisterCatalogueCommand(CLI::App& app, int* exit_code) {
  struct Args {
    std::string file;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  CLI::App* cat = app.add_subcommand("catalogue", "HFL item catalogues (public lists of item ids)");
  cat->require_subcommand(1);
  CLI::App* digest = cat->add_subcommand(
      "digest", "check a catalogue file (one item id per line) and print its digest");
  digest->add_option("FILE", a->file, "the catalogue")->required();
  digest->add_flag("--json", a->json, "print {file, items, digest}");
  digest->callback([a, exit_code] {
    auto c = data::Catalogue::Load(a->file);
    if (!c.ok()) {
      std::cerr << "fedmf catalogue digest: " << c.status().message() << "\n";
      *exit_code = kExitData;  // a file the command names: missing, unreadable or malformed
      return;
    }
    if (a->json) {
      std::cout
          << nlohmann::json{{"file", a->file}, {"items", c->size()}, {"digest", c->digest()}}.dump()
          << "\n";
    } else {
      std::cout << c->digest() << "  " << c->size() << " items  " << a->file << "\n";
    }
    *exit_code = kExitOk;
  });
}

}  // namespace fedmf::cli
