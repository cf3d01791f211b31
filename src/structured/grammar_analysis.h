// Analyses of a Grammar that Build (and frontends) rely on, each linear in the grammar's size so a
// grammar at GrammarLimits costs milliseconds: which rules derive the empty string, and whether
// any rule can reach itself before consuming a character (the matcher would loop on it).
#pragma once

#include <vector>

#include "structured/grammar.h"
#include "util/status.h"

namespace brisk::structured {

// nullable[r]: rule r derives the empty string. Rule references must be in range.
std::vector<bool> NullableRules(const Grammar& g);

// invalid_argument naming a cycle (a -> b -> a) when some rule can reach itself through
// references that are each preceded only by nullable symbols.
Status CheckNoLeftRecursion(const Grammar& g);

}  // namespace brisk::structured
