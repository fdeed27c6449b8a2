// The lockstep programming model in one include: Worker, ForEach, Variable, makeMaster, shared memory, launch.
// See docs/lockstep.md for the model and examples.
#pragma once

#include "core/lockstep/block_cfg.hpp"
#include "core/lockstep/for_each.hpp"
#include "core/lockstep/idx.hpp"
#include "core/lockstep/launch.hpp"
#include "core/lockstep/shared.hpp"
#include "core/lockstep/vector.hpp"
#include "core/lockstep/worker.hpp"
