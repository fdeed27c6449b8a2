// The column-stencil layer in one include: grid, fields, boundary conditions, operators, expressions, engines.
#pragma once

#include <strata/operators/bcs.hpp>
#include <strata/operators/engine.hpp>
#include <strata/operators/expr.hpp>
#include <strata/operators/field.hpp>
#include <strata/operators/grid.hpp>
#include <strata/operators/stagger.hpp>
#include <strata/operators/stencils.hpp>
