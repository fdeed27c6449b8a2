// The column-stencil engines on the Cuda backend, compared with Serial (bit for bit). Compiled in the CUDA
// configuration; without a device it prints one line and reports "skipped" to CTest (exit code 77).
#include <strata/core/backend.hpp>
#include <strata/operators/matrix.hpp>
#include <strata/operators/matrix_algebra.hpp>
#include <strata/operators/operators.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

using namespace strata;
using namespace strata::ops;

namespace {

int failures = 0;

template <class S>
bool sameColumns(Field<double, S>& device, Field<double, S> const& host) {
    device.toHost();
    for (uint32_t c = 0; c < host.columns(); ++c)
        if (std::memcmp(device.column(c).data(), host.column(c).data(), host.levels() * sizeof(double)) != 0)
            return false;
    return true;
}

void run(uint32_t levels) {
    uint32_t const columns = 100;
    auto grid = std::make_shared<Grid const>(Grid::uniform(levels, 10000.0));
    Field<double, Center> thetaH(grid, columns, core::MemSpace::Host), kH(grid, columns, core::MemSpace::Host),
        outH(grid, columns, core::MemSpace::Host);
    Field<double, Center> thetaD(grid, columns, core::MemSpace::Cuda), kD(grid, columns, core::MemSpace::Cuda),
        outD(grid, columns, core::MemSpace::Cuda);
    for (uint32_t c = 0; c < columns; ++c)
        for (uint32_t k = 0; k < levels; ++k) {
            thetaH.at(c, k) = thetaD.at(c, k) = 300.0 + std::sin(0.01 * k * (c + 1));
            kH.at(c, k) = kD.at(c, k) = 1.0 + 0.001 * k;
        }
    thetaD.toDevice();
    kD.toDevice();
    auto const grad = GradientC2F{SetValue{300.0}, SetGradient{0.0}};
    auto const interp = InterpolateC2F{Extrapolate{}, Extrapolate{}};
    auto const div = DivergenceF2C{SetValue{0.0}, SetValue{0.0}};
    auto const wFace = coord<Face>() * 1e-4;
    auto const advect = Upwind3rdOrderBiasedProductC2F{ThirdOrderOneSided{}, ThirdOrderOneSided{}};
    evaluate(core::Serial{}, outH, div(interp(kH) * grad(thetaH)) - div(advect(wFace, thetaH)), Engine::Direct);
    for (Engine engine : {Engine::Direct, Engine::Shmem}) {
        evaluate(core::Cuda{}, outD, div(interp(kD) * grad(thetaD)) - div(advect(wFace, thetaD)), engine);
        bool const ok = sameColumns(outD, outH);
        std::printf("%s: diffusion + advection, %u levels, %s on Cuda == Direct on Serial\n", ok ? "ok  " : "FAIL",
                    levels, engineName(engine));
        if (!ok) ++failures;
    }
    // The flux-limited product (positivity-preserving advection) in a closed column.
    auto const limited = UpwindLimitedProductC2F{FirstOrderOneSided{}, FirstOrderOneSided{}};
    evaluate(core::Serial{}, outH, div(limited(wFace, thetaH)), Engine::Direct);
    for (Engine engine : {Engine::Direct, Engine::Shmem}) {
        evaluate(core::Cuda{}, outD, div(limited(wFace, thetaD)), engine);
        bool const ok = sameColumns(outD, outH);
        std::printf("%s: limited advection, %u levels, %s on Cuda == Direct on Serial\n", ok ? "ok  " : "FAIL", levels,
                    engineName(engine));
        if (!ok) ++failures;
    }
    // Two destinations from one kernel (evaluateFused): the bits of the single evaluations on Serial.
    Field<double, Center> out2H(grid, columns, core::MemSpace::Host), out2D(grid, columns, core::MemSpace::Cuda);
    evaluate(core::Serial{}, outH, div(interp(kH) * grad(thetaH)), Engine::Direct);
    evaluate(core::Serial{}, out2H, div(limited(wFace, thetaH)), Engine::Direct);
    for (Engine engine : {Engine::Direct, Engine::Shmem}) {
        evaluateFused(core::Cuda{}, engine, EngineOptions{}, assign(outD, div(interp(kD) * grad(thetaD))),
                      assign(out2D, div(limited(wFace, thetaD))));
        bool const ok = sameColumns(outD, outH) && sameColumns(out2D, out2H);
        std::printf("%s: evaluateFused (diffusion, limited advection), %u levels, %s on Cuda == Direct on Serial\n",
                    ok ? "ok  " : "FAIL", levels, engineName(engine));
        if (!ok) ++failures;
    }
    // Auto on Cuda is a timed choice: its trial calls (both engines in turn, each waited for) and the calls after
    // them give Serial Direct's bits, and the plans say they were timed.
    evaluate(core::Serial{}, outH, div(interp(kH) * grad(thetaH)), Engine::Direct);
    bool same = true, timed = true;
    for (int call = 0; call < 6; ++call) {
        EvalPlan const plan = evaluate(core::Cuda{}, outD, div(interp(kD) * grad(thetaD)), Engine::Auto);
        same = same && sameColumns(outD, outH);
        timed = timed && plan.timed;
    }
    bool const ok = same && (timed || levels != 64); // 64 levels: a Shmem plan fits, so Auto times
    std::printf("%s: Auto, 6 calls, %u levels, on Cuda == Direct on Serial (plans %s)\n", ok ? "ok  " : "FAIL", levels,
                timed ? "timed" : "not all timed");
    if (!ok) ++failures;

    // The diffusion operator's matrix (matrix.hpp): its diagonals and affine part on Cuda with Serial's bits.
    auto const hostMatrix = matrixOf(core::Serial{}, thetaH, [&](auto const& v) { return div(interp(kH) * grad(v)); });
    auto deviceMatrix = matrixOf(core::Cuda{}, thetaD, [&](auto const& v) { return div(interp(kD) * grad(v)); });
    bool matrixSame = deviceMatrix.lo == hostMatrix.lo && deviceMatrix.hi == hostMatrix.hi &&
                      sameColumns(deviceMatrix.affine, hostMatrix.affine);
    for (int d = hostMatrix.lo; matrixSame && d <= hostMatrix.hi; ++d)
        matrixSame = sameColumns(deviceMatrix.diagonal(d), hostMatrix.diagonal(d));
    std::printf("%s: matrixOf(diffusion), %u levels, on Cuda == on Serial\n", matrixSame ? "ok  " : "FAIL", levels);
    if (!matrixSame) ++failures;

    // Its square composed, its sum with itself and its application on Cuda with Serial's bits (matrix_algebra.hpp).
    auto const hostSquare = composeMatrices(core::Serial{}, hostMatrix, hostMatrix);
    auto deviceSquare = composeMatrices(core::Cuda{}, deviceMatrix, deviceMatrix);
    auto const hostSum = addMatrices(core::Serial{}, hostMatrix, hostSquare);
    auto deviceSum = addMatrices(core::Cuda{}, deviceMatrix, deviceSquare);
    applyMatrix(core::Serial{}, hostSum, thetaH, outH);
    applyMatrix(core::Cuda{}, deviceSum, thetaD, outD);
    bool algebraSame = sameColumns(outD, outH) && sameColumns(deviceSquare.affine, hostSquare.affine);
    for (int d = hostSquare.lo; algebraSame && d <= hostSquare.hi; ++d)
        algebraSame = sameColumns(deviceSquare.diagonal(d), hostSquare.diagonal(d)) &&
                      sameColumns(deviceSum.diagonal(d), hostSum.diagonal(d));
    std::printf("%s: composeMatrices, addMatrices, applyMatrix, %u levels, on Cuda == on Serial\n",
                algebraSame ? "ok  " : "FAIL", levels);
    if (!algebraSame) ++failures;

    // The Jacobian of a nonlinear expression (dual numbers through the engines): Cuda with Serial's bits.
    auto const hostJac =
        jacobianOf(core::Serial{}, thetaH, [&](auto const& v) { return v * div(interp(kH) * grad(v)); });
    auto deviceJac = jacobianOf(core::Cuda{}, thetaD, [&](auto const& v) { return v * div(interp(kD) * grad(v)); });
    bool jacSame = deviceJac.matrix.lo == hostJac.matrix.lo && deviceJac.matrix.hi == hostJac.matrix.hi &&
                   sameColumns(deviceJac.value, hostJac.value);
    for (int d = hostJac.matrix.lo; jacSame && d <= hostJac.matrix.hi; ++d)
        jacSame = sameColumns(deviceJac.matrix.diagonal(d), hostJac.matrix.diagonal(d));
    std::printf("%s: jacobianOf(x diffusion), %u levels, on Cuda == on Serial\n", jacSame ? "ok  " : "FAIL", levels);
    if (!jacSame) ++failures;
}

} // namespace

int main() {
    if (core::cudaDeviceCount() == 0) {
        std::printf("SKIP: no CUDA device visible; the operator kernels were compiled and linked but cannot run\n");
        return 77;
    }
    for (uint32_t levels : {1u, 7u, 64u, 1000u})
        run(levels);
    return failures == 0 ? 0 : 1;
}
