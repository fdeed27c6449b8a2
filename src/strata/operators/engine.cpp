// The engines are templates (operators/engine.hpp); this translation unit keeps the library target non-empty and
// checks that the header stands on its own.
#include <strata/operators/engine.hpp>
