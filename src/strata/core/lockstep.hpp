// The lockstep programming model in one include: Worker, ForEach, Variable, makeMaster, shared memory, block
// collectives, launch.
// See docs/lockstep.md for the model and examples.
#pragma once

#include <strata/core/lockstep/block_cfg.hpp>
#include <strata/core/lockstep/collectives.hpp>
#include <strata/core/lockstep/for_each.hpp>
#include <strata/core/lockstep/idx.hpp>
#include <strata/core/lockstep/launch.hpp>
#include <strata/core/lockstep/shared.hpp>
#include <strata/core/lockstep/vector.hpp>
#include <strata/core/lockstep/worker.hpp>
