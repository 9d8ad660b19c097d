// make_test_checkpoint DIR [--gates]: writes the converter tests' small checkpoint directory
// (tests/converter/checkpoint_fixture.h) for the command-line smoke test. With --gates,
// encoder layer 1 keeps heads 0 and 2 and decoder layer 0 self-attention keeps none.
#include <cstring>
#include <iostream>

#include "tests/converter/checkpoint_fixture.h"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3 || (argc == 3 && std::strcmp(argv[2], "--gates") != 0)) {
    std::cerr << "usage: make_test_checkpoint DIR [--gates]\n";
    return 2;
  }
  headwise::testing::CheckpointFixture f = headwise::testing::MakeCheckpoint();
  if (argc == 3) {
    f.SetGate("model.encoder.layers.1.self_attn", {0.5f, -0.5f, 2.0f, -1.0f});
    f.SetGate("model.decoder.layers.0.self_attn", {-1.0f, -1.0f, -1.0f, -1.0f});
  }
  f.Write(argv[1]);
  return 0;
}
