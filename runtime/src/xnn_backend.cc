#include "xnn_backend.h"

#include <cpuinfo.h>

#include <cmath>
#include <cstdint>
#include <mutex>

namespace headwise {

const char* XnnStatusName(xnn_status s) {
  switch (s) {
    case xnn_status_success: return "xnn_status_success";
    case xnn_status_uninitialized: return "xnn_status_uninitialized";
    case xnn_status_invalid_parameter: return "xnn_status_invalid_parameter";
    case xnn_status_invalid_state: return "xnn_status_invalid_state";
    case xnn_status_unsupported_parameter: return "xnn_status_unsupported_parameter";
    case xnn_status_unsupported_hardware: return "xnn_status_unsupported_hardware";
    case xnn_status_out_of_memory: return "xnn_status_out_of_memory";
  }
  return "xnn_status_unknown";
}

Status FromXnn(xnn_status s, const std::string& what) {
  if (s == xnn_status_success) return Status::Ok();
  const ErrorCode code = s == xnn_status_out_of_memory ? ErrorCode::kOutOfMemory : ErrorCode::kBackend;
  return Status(code, what + ": XNNPACK returned " + XnnStatusName(s));
}

void XnnOperatorDeleter::operator()(xnn_operator_t op) const {
  if (op != nullptr) xnn_delete_operator(op);
}

Status InitXnnpack() {
  static std::once_flag once;
  static xnn_status status = xnn_status_uninitialized;
  std::call_once(once, [] { status = xnn_initialize(nullptr); });
  return FromXnn(status, "xnn_initialize");
}

namespace {

Fp16Support Detect() {
  Fp16Support s;
#if defined(__aarch64__)
  // xnn_initialize initialised cpuinfo; calling it again is a cheap no-op.
  if (!cpuinfo_initialize()) {
    s.reason = "cpuinfo_initialize failed";
    return s;
  }
  if (!cpuinfo_has_arm_neon_fp16_arith()) {
    s.reason = "the CPU has no fp16 arithmetic (cpuinfo: no ARMv8.2 FP16 arithmetic)";
    return s;
  }
  // XNNPACK decides on its own CPU tables; its answer is the one that counts.
  const uint16_t one = 0x3c00, zero = 0;
  xnn_operator_t op = nullptr;
  const xnn_status st = xnn_create_fully_connected_nc_f16(1, 1, 1, 1, &one, &zero, -INFINITY,
                                                          INFINITY, 0, &op);
  if (op != nullptr) xnn_delete_operator(op);
  if (st != xnn_status_success) {
    s.reason = std::string("cpuinfo reports fp16 arithmetic but XNNPACK's f16 operator returned ") +
               XnnStatusName(st);
    return s;
  }
  s.available = true;
  s.reason = "the CPU has fp16 arithmetic (ARMv8.2 FP16) and XNNPACK f16 kernels";
#elif defined(__arm__)
  s.reason = "32-bit ARM: Debian's 2022 XNNPACK has no aarch32 fp16 arithmetic kernels";
#else
  s.reason = "not an ARM CPU: XNNPACK would emulate fp16 arithmetic, slower than F32";
#endif
  return s;
}

}  // namespace

const Fp16Support& DetectFp16Arithmetic() {
  static const Fp16Support support = Detect();
  return support;
}

}  // namespace headwise
