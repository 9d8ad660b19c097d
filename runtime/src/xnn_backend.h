// runtime/src/xnn_backend.h: the process-wide XNNPACK state and the translation of its statuses.
//
// Lifetime: InitXnnpack() initialises XNNPACK once per process (thread-safe; later calls return
// the first call's result). XNNPACK is never deinitialised: operators of any Translator may
// exist until process exit.
// Errors: xnn_status values become kBackend (kOutOfMemory for xnn_status_out_of_memory) with
// the XNNPACK status name and what was being done in the message.
#ifndef HEADWISE_RUNTIME_XNN_BACKEND_H_
#define HEADWISE_RUNTIME_XNN_BACKEND_H_

#include <xnnpack.h>

#include <memory>
#include <string>

#include "headwise/status.hpp"

namespace headwise {

Status InitXnnpack();

// "xnn_status_out_of_memory" etc.
const char* XnnStatusName(xnn_status s);
// Ok for xnn_status_success, otherwise "<what>: XNNPACK returned <name>".
Status FromXnn(xnn_status s, const std::string& what);

// An XNNPACK operator, deleted with xnn_delete_operator.
struct XnnOperatorDeleter {
  void operator()(xnn_operator_t op) const;
};
using XnnOperator = std::unique_ptr<xnn_operator, XnnOperatorDeleter>;

// Whether XNNPACK's f16 operators run in real fp16 arithmetic here: aarch64 with ARMv8.2 FP16
// arithmetic (cpuinfo_has_arm_neon_fp16_arith()) and an f16 fully-connected operator that
// XNNPACK agrees to create (it answers xnn_status_unsupported_hardware otherwise). Always false
// on other architectures: x86 would emulate fp16 (slower than F32), and Debian's 2022 XNNPACK
// has no aarch32 fp16 arithmetic kernels. Computed once per process; call after InitXnnpack.
struct Fp16Support {
  bool available = false;
  std::string reason;  // why not (or what was found), for messages
};
const Fp16Support& DetectFp16Arithmetic();

}  // namespace headwise

#endif  // HEADWISE_RUNTIME_XNN_BACKEND_H_
