// The column-stencil layer in one include: grid, fields, boundary conditions, operators, expressions, engines.
#pragma once

#include "operators/bcs.hpp"
#include "operators/engine.hpp"
#include "operators/expr.hpp"
#include "operators/field.hpp"
#include "operators/grid.hpp"
#include "operators/stagger.hpp"
#include "operators/stencils.hpp"
