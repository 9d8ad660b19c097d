// fp16_probe --expect yes|no: what this CPU offers for fp16 arithmetic, as the runtime would
// see it: cpuinfo's cpuinfo_has_arm_neon_fp16_arith() and whether Debian's XNNPACK creates and
// runs an f16 fully-connected operator (xnn_create_fully_connected_nc_f16). XNNPACK answers
// xnn_status_unsupported_hardware on CPUs without fp16 arithmetic, which is the clean
// fallback signal. Exits 0 when both agree with --expect (and the f16 result is right).
// Run under qemu with -cpu cortex-a76 (fp16 arithmetic) and -cpu cortex-a53 (none).
#include <cpuinfo.h>
#include <xnnpack.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "common/half.h"

namespace {

// Runs a 3x4 f16 fully-connected layer; returns the xnn status, *max_error vs float math.
xnn_status RunF16FullyConnected(double* max_error) {
  constexpr size_t kIn = 4, kOut = 3, kBatch = 2;
  const float input[kBatch * kIn] = {0.5f, -1.0f, 2.0f, 0.25f, 1.5f, 0.75f, -0.5f, 1.0f};
  const float weights[kOut * kIn] = {0.1f, 0.2f, 0.3f, 0.4f, -0.5f, 0.25f, 0.125f, 1.0f,
                                     2.0f, -1.0f, 0.5f, 0.0f};
  const float bias[kOut] = {0.5f, -0.25f, 1.0f};
  std::vector<uint16_t> in16(kBatch * kIn), w16(kOut * kIn), b16(kOut), out16(kBatch * kOut);
  for (size_t i = 0; i < in16.size(); ++i) in16[i] = headwise::FloatToF16(input[i]);
  for (size_t i = 0; i < w16.size(); ++i) w16[i] = headwise::FloatToF16(weights[i]);
  for (size_t i = 0; i < b16.size(); ++i) b16[i] = headwise::FloatToF16(bias[i]);

  xnn_operator_t op = nullptr;
  xnn_status status = xnn_create_fully_connected_nc_f16(
      kIn, kOut, kIn, kOut, w16.data(), b16.data(), -INFINITY, INFINITY, 0, &op);
  if (status != xnn_status_success) return status;
  status = xnn_setup_fully_connected_nc_f16(op, kBatch, in16.data(), out16.data(), nullptr);
  if (status == xnn_status_success) status = xnn_run_operator(op, nullptr);
  xnn_delete_operator(op);
  *max_error = 0.0;
  for (size_t b = 0; b < kBatch; ++b) {
    for (size_t o = 0; o < kOut; ++o) {
      double want = bias[o];
      for (size_t i = 0; i < kIn; ++i) want += double(input[b * kIn + i]) * weights[o * kIn + i];
      const double got = headwise::F16ToFloat(out16[b * kOut + o]);
      *max_error = std::fmax(*max_error, std::fabs(got - want));
    }
  }
  return status;
}

const char* StatusName(xnn_status s) {
  switch (s) {
    case xnn_status_success: return "success";
    case xnn_status_uninitialized: return "uninitialized";
    case xnn_status_invalid_parameter: return "invalid_parameter";
    case xnn_status_invalid_state: return "invalid_state";
    case xnn_status_unsupported_parameter: return "unsupported_parameter";
    case xnn_status_unsupported_hardware: return "unsupported_hardware";
    case xnn_status_out_of_memory: return "out_of_memory";
  }
  return "unknown";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || std::strcmp(argv[1], "--expect") != 0 ||
      (std::strcmp(argv[2], "yes") != 0 && std::strcmp(argv[2], "no") != 0)) {
    std::fprintf(stderr, "usage: %s --expect yes|no\n", argv[0]);
    return 2;
  }
  const bool expect = std::strcmp(argv[2], "yes") == 0;
  if (!cpuinfo_initialize()) {
    std::fprintf(stderr, "cpuinfo_initialize failed\n");
    return 1;
  }
  const bool neon = cpuinfo_has_arm_neon();
  const bool fp16_arith = cpuinfo_has_arm_neon_fp16_arith();
  const xnn_status init = xnn_initialize(nullptr);
  if (init != xnn_status_success) {
    std::fprintf(stderr, "xnn_initialize: %s\n", StatusName(init));
    return 1;
  }
  double max_error = -1.0;
  const xnn_status fc = RunF16FullyConnected(&max_error);
  std::printf("neon=%d neon_fp16_arith=%d xnn_fully_connected_nc_f16=%s", neon, fp16_arith,
              StatusName(fc));
  if (fc == xnn_status_success) std::printf(" max_error=%.5f", max_error);
  std::printf("\n");

  bool ok = fp16_arith == expect;
  if (expect) {
    ok = ok && fc == xnn_status_success && max_error >= 0.0 && max_error < 0.02;
  } else {
    ok = ok && fc == xnn_status_unsupported_hardware;
  }
  std::printf("%s: expected fp16 arithmetic %s\n", ok ? "ok" : "FAIL", expect ? "yes" : "no");
  return ok ? 0 : 1;
}
